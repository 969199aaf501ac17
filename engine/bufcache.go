package engine

// bufCache holds large buffers connections gave back, inbound (a frame
// assembled across reads) and outbound (a burst that has been sent), for the
// next connection of the loop that needs one: a stream of large messages
// does not allocate a buffer each, while an idle connection holds none. It
// is the loop's own (no lock) and bounded in bytes.
type bufCache struct {
	bufs  [][]byte
	bytes int // their total capacity
}

const (
	maxBufCache = 4 << 20  // bytes cached per loop
	minCached   = 16 << 10 // smaller buffers are left to the garbage collector
)

// get returns an empty buffer with room for need bytes: the smallest cached
// one that fits and is not more than four times too big, or a new one.
func (bc *bufCache) get(need int) []byte {
	best := -1
	for i, b := range bc.bufs {
		if c := cap(b); c >= need && c <= 4*need && (best < 0 || c < cap(bc.bufs[best])) {
			best = i
		}
	}
	if best < 0 {
		return make([]byte, 0, max(need+need/2, 4<<10))
	}
	b := bc.bufs[best]
	last := len(bc.bufs) - 1
	bc.bufs[best], bc.bufs[last] = bc.bufs[last], nil
	bc.bufs = bc.bufs[:last]
	bc.bytes -= cap(b)
	return b[:0]
}

// put caches b unless it is small or the cache is full; the smallest cached
// buffer makes room for a larger one. The caller gives b up.
func (bc *bufCache) put(b []byte) {
	if cap(b) < minCached {
		return
	}
	for bc.bytes+cap(b) > maxBufCache && len(bc.bufs) > 0 {
		small := 0
		for i := range bc.bufs {
			if cap(bc.bufs[i]) < cap(bc.bufs[small]) {
				small = i
			}
		}
		if cap(bc.bufs[small]) >= cap(b) {
			return
		}
		last := len(bc.bufs) - 1
		bc.bytes -= cap(bc.bufs[small])
		bc.bufs[small], bc.bufs[last] = bc.bufs[last], nil
		bc.bufs = bc.bufs[:last]
	}
	if bc.bytes+cap(b) <= maxBufCache {
		bc.bufs = append(bc.bufs, b[:0])
		bc.bytes += cap(b)
	}
}
