package looptls

import "testing"

// TestRecordsFrame: record boundaries are found whatever the chunks the
// stream arrives in, empty records included, and a header announcing a
// body larger than TLS allows counts as a record at once, so that
// crypto/tls sees it and refuses it.
func TestRecordsFrame(t *testing.T) {
	rec := func(n int) []byte {
		b := make([]byte, 5+n)
		b[0], b[1], b[2], b[3], b[4] = 23, 3, 3, byte(n>>8), byte(n)
		return b
	}
	var stream []byte
	var ends []int64
	for _, n := range []int{1046, 0, 1, 16384 + 256, 300} {
		stream = append(stream, rec(n)...)
		ends = append(ends, int64(len(stream)))
	}
	for _, chunk := range []int{1, 2, 5, 7, 1000, len(stream)} {
		var r records
		for off := 0; off < len(stream); off += chunk {
			end := min(off+chunk, len(stream))
			r.frame(stream[off:end])
			// Every record ending within what arrived is whole, the
			// last such end is wholeEnd.
			var whole, last int64
			for _, e := range ends {
				if e <= int64(end) {
					whole, last = whole+1, e
				}
			}
			if r.whole != whole || r.wholeEnd != last || r.recvd != int64(end) {
				t.Fatalf("chunk %d, at %d: whole %d (want %d), wholeEnd %d (want %d), recvd %d", chunk, end, r.whole, whole, r.wholeEnd, last, r.recvd)
			}
		}
	}

	var r records
	r.frame([]byte{23, 3, 3, 0xff, 0xff, 1, 2})
	if r.whole != 1 || r.wholeEnd != 5 {
		t.Fatalf("oversized header: whole %d, wholeEnd %d; want 1 and 5", r.whole, r.wholeEnd)
	}
}
