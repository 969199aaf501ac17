//go:build linux && cgo && !ringloop_nouring

package uring

import (
	"testing"
	"time"

	"github.com/ringloop/ringloop/internal/driver"
	"github.com/ringloop/ringloop/internal/drivertest"
	"golang.org/x/sys/unix"
)

// TestBatchedZeroAllocs: a Wait that flushes many sends at once (more than a
// runtime.Pinner holds without growing) allocates nothing in steady state.
func TestBatchedZeroAllocs(t *testing.T) {
	for _, p := range drivertest.Profiles() {
		t.Run(string(p), func(t *testing.T) {
			d, b := newBatchedWithBatch(t, driver.Config{Profile: p, Parked: true})
			const n = 24
			ps := readyPairs(t, n)
			bufs := make([][]byte, n)
			for i := range bufs {
				bufs[i] = make([]byte, 64)
			}
			sent := 0
			fn := func(c *driver.Completion) {
				if c.Res == 64 {
					sent++
				}
			}
			deadline := time.Now().Add(30 * time.Second)
			sink := make([]byte, 256)
			round := func() {
				sent = 0
				for i, fds := range ps {
					d.Send(fds[0], driver.Tag(100+i), bufs[i])
				}
				for sent < n && time.Now().Before(deadline) {
					if _, err := d.Wait(time.Second, fn); err != nil {
						t.Fatal(err)
					}
				}
				if sent != n {
					t.Fatalf("%d of %d sends completed", sent, n)
				}
				for _, fds := range ps { // drain the peers
					for {
						if k, _ := unix.Read(fds[1], sink); k <= 0 {
							break
						}
					}
				}
			}
			for range 10 {
				round()
			}
			flushes := b.stats.flushes
			if a := testing.AllocsPerRun(100, round); a != 0 {
				t.Fatalf("%v allocations per Wait of %d sends", a, n)
			}
			if b.stats.flushes == flushes {
				t.Fatal("no flush ran: the sends did not go through the batch")
			}
		})
	}
}
