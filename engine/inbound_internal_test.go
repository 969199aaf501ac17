package engine

import "testing"

// TestKeepCacheBound: the loop's cache of inbound buffers never holds more
// than maxKeepCache bytes and hands out one that fits.
func TestKeepCacheBound(t *testing.T) {
	var l Loop
	for i := range 100 {
		l.putKeepBuf(make([]byte, 0, (65+i%7*100)<<10))
		total := 0
		for _, b := range l.keepCache {
			total += cap(b)
		}
		if total != l.keepCached || total > maxKeepCache {
			t.Fatalf("after %d puts: cached %d, counted %d, bound %d", i+1, total, l.keepCached, maxKeepCache)
		}
	}
	if got := cap(l.keepBuf(600 << 10)); got < 600<<10 {
		t.Fatalf("keepBuf(600 KiB) has cap %d", got)
	}
	if b := l.keepBuf(8 << 20); cap(b) < 8<<20 || len(b) != 0 {
		t.Fatalf("keepBuf(8 MiB): len %d cap %d", len(b), cap(b))
	}
}
