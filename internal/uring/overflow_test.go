//go:build linux && cgo && !ringloop_nouring

package uring

import (
	"testing"
	"time"

	"github.com/ringloop/ringloop/internal/driver"
	"github.com/ringloop/ringloop/internal/drivertest"
	"golang.org/x/sys/unix"
)

// TestSmallCQNops: 5000 ops through a 4-entry SQ and CQ: the SQ fills and is
// submitted early, the CQ overflows into the kernel's list, and every op
// completes exactly once.
func TestSmallCQNops(t *testing.T) {
	forEachProfile(t, func(t *testing.T, p driver.Profile) {
		d := newLocked(t, driver.Config{Profile: p, Entries: 4, CQEntries: 4})
		const n = 5000
		seen := make([]int, n)
		for i := 0; i < n; i++ {
			d.Nop(driver.Tag(i))
		}
		got := 0
		deadline := time.Now().Add(20 * time.Second)
		for got < n && time.Now().Before(deadline) {
			_, err := d.Wait(10*time.Millisecond, func(c *driver.Completion) {
				if c.Res != 0 || c.More {
					t.Errorf("nop %d: res %d more %v", c.Tag, c.Res, c.More)
				}
				seen[c.Tag]++
				got++
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		for i, s := range seen {
			if s != 1 {
				t.Fatalf("nop %d completed %d times (of %d completions)", i, s, got)
			}
		}
		st := d.Stats()
		if st.Overflow == 0 || st.SQFull == 0 {
			t.Fatalf("5000 ops through 4 entries neither overflowed nor filled the SQ: %+v", st)
		}
	})
}

// TestSmallCQTraffic: an accept storm, a receive per connection and a send
// per connection through a 4-entry CQ. Multishot requests that the kernel
// ends on overflow are re-armed unseen; nothing is lost.
func TestSmallCQTraffic(t *testing.T) {
	forEachProfile(t, func(t *testing.T, p driver.Profile) {
		d := newLocked(t, driver.Config{Profile: p, Entries: 4, CQEntries: 4})
		h := drivertest.NewHarness(t, d)
		conns := 200 / scale
		lfd, sa := drivertest.Listen(t, 1024)
		h.Own(lfd)
		acc := h.Accept(lfd)
		cfds := make([]int, conns)
		connects := make([]*drivertest.Op, conns)
		for i := range cfds {
			cfds[i] = h.Own(drivertest.Socket(t))
			drivertest.Linger0(cfds[i])
			connects[i] = h.Connect(cfds[i], sa)
		}
		h.Until(0, "accepts", func() bool { return len(acc.More) == conns && drivertest.AllDone(connects...) })
		msg := []byte("through a tiny completion queue")
		var recvs, sends []*drivertest.Op
		for i, nfd := range acc.More {
			recvs = append(recvs, h.Recv(int(nfd), nil))
			sends = append(sends, h.Send(cfds[i], msg))
		}
		h.Until(0, "data", func() bool {
			for _, r := range recvs {
				if r.Bytes != int64(len(msg)) {
					return false
				}
			}
			return drivertest.AllDone(sends...)
		})
		for _, s := range sends {
			if s.Res != int32(len(msg)) {
				t.Fatalf("send: %s", drivertest.ErrnoRes(s.Res))
			}
		}
		for _, r := range recvs {
			h.Cancel(r)
		}
		h.Cancel(acc)
		h.Until(0, "cancels", func() bool { return drivertest.AllDone(recvs...) && acc.Done })
		for _, r := range append(recvs, acc) {
			if r.Res != -int32(unix.ECANCELED) {
				t.Fatalf("%s ended with %s", r.Kind, drivertest.ErrnoRes(r.Res))
			}
		}
		if d.Stats().Overflow == 0 {
			t.Fatalf("no overflow with a 4-entry CQ: %+v", d.Stats())
		}
	})
}
