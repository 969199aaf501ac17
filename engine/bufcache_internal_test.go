package engine

import "testing"

// TestBufCacheBound: the loop's buffer cache never holds more than
// maxBufCache bytes, leaves small buffers to the collector and hands out one
// that fits.
func TestBufCacheBound(t *testing.T) {
	var bc bufCache
	for i := range 100 {
		bc.put(make([]byte, 0, (65+i%7*100)<<10))
		total := 0
		for _, b := range bc.bufs {
			total += cap(b)
		}
		if total != bc.bytes || total > maxBufCache {
			t.Fatalf("after %d puts: cached %d, counted %d, bound %d", i+1, total, bc.bytes, maxBufCache)
		}
	}
	n := len(bc.bufs)
	bc.put(make([]byte, 0, minCached-1))
	bc.put(nil)
	if len(bc.bufs) != n {
		t.Fatalf("a buffer under %d bytes was cached", minCached)
	}
	if got := cap(bc.get(600 << 10)); got < 600<<10 {
		t.Fatalf("get(600 KiB) has cap %d", got)
	}
	if got := cap(bc.get(minCached)); got > 4*minCached {
		t.Fatalf("get(%d) handed out a buffer of %d", minCached, got)
	}
	if b := bc.get(8 << 20); cap(b) < 8<<20 || len(b) != 0 {
		t.Fatalf("get(8 MiB): len %d cap %d", len(b), cap(b))
	}
}
