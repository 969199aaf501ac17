package looptls

// records follows the record boundaries of the inbound ciphertext (every
// record begins with a 5-byte header whose last two bytes give its length,
// encrypted or not), so that an established connection hands crypto/tls
// whole records only and knows when it has read them all: a partial
// record waits here, not in crypto/tls's buffer, and no read is made only
// to learn that the ciphertext is used up (each read of crypto/tls's from
// its transport allocates; one per delivery is left).
type records struct {
	recvd    int64 // stream bytes received
	given    int64 // stream bytes handed to crypto/tls
	wholeEnd int64 // stream offset where the last whole record received ends
	whole    int64 // whole records received
	consumed int64 // records crypto/tls has surely read: at most what it has
	hn       int   // bytes of the current record's header seen (0-5)
	body     int   // bytes of the current record's body still to come
}

// maxRecordBody is the largest record body any TLS version allows; a
// header announcing more is handed over at once, for crypto/tls to refuse.
const maxRecordBody = 16384 + 2048

// frame follows b, the next bytes of the stream.
func (r *records) frame(b []byte) {
	for len(b) > 0 {
		if r.hn < 5 {
			switch r.hn {
			case 3:
				r.body = int(b[0]) << 8
			case 4:
				r.body |= int(b[0])
			}
			r.hn++
			r.recvd++
			b = b[1:]
			if r.hn == 5 && (r.body == 0 || r.body > maxRecordBody) {
				r.whole++
				r.wholeEnd = r.recvd
				if r.body == 0 {
					r.hn = 0
				}
			}
			continue
		}
		k := min(r.body, len(b))
		r.body -= k
		r.recvd += int64(k)
		b = b[k:]
		if r.body == 0 {
			r.hn = 0
			r.whole++
			r.wholeEnd = r.recvd
		}
	}
}
