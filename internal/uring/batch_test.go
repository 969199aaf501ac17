//go:build linux && cgo && !ringloop_nouring

package uring

import (
	"time"

	"testing"

	"github.com/ringloop/ringloop/internal/epoll"
	"golang.org/x/sys/unix"

	"github.com/ringloop/ringloop/internal/driver"
	"github.com/ringloop/ringloop/internal/drivertest"
)

func newBatchedDriver(t *testing.T, cfg driver.Config) driver.Driver {
	t.Helper()
	d, err := NewBatched(cfg)
	if err != nil {
		t.Fatalf("NewBatched(%+v): %v", cfg, err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// TestBatchedContract runs the driver contract suite on the readiness
// variant, under every profile and both threading modes.
func TestBatchedContract(t *testing.T) {
	drivertest.Run(t, newBatchedDriver)
}

// newBatchedWithBatch builds the variant keeping its batch for the test.
func newBatchedWithBatch(t *testing.T, cfg driver.Config) (driver.Driver, *ringBatch) {
	t.Helper()
	b, err := newRingBatch(cfg)
	if err != nil {
		t.Fatal(err)
	}
	d, err := epoll.NewBatched(cfg, b)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d, b
}

// pairs returns n connected socket pairs, each with one byte waiting on
// its [1] end.
func readyPairs(t *testing.T, n int) [][2]int {
	t.Helper()
	out := make([][2]int, n)
	for i := range out {
		fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { unix.Close(fds[0]); unix.Close(fds[1]) })
		if _, err := unix.Write(fds[0], []byte{byte('a' + i)}); err != nil {
			t.Fatal(err)
		}
		out[i] = [2]int{fds[0], fds[1]}
	}
	return out
}

// TestBatchedOneEnterPerWait: the receives of every ready fd, and the sends
// prepared before the Wait, go to the kernel in one io_uring_enter and
// complete inside it.
func TestBatchedOneEnterPerWait(t *testing.T) {
	for _, p := range drivertest.Profiles() {
		t.Run(string(p), func(t *testing.T) {
			d, b := newBatchedWithBatch(t, driver.Config{Profile: p, Parked: true})
			const n = 8
			ps := readyPairs(t, n)
			for i, fds := range ps {
				d.Recv(fds[1], driver.Tag(i+1))
			}
			got := map[driver.Tag]string{}
			deadline := time.Now().Add(30 * time.Second)
			for len(got) < n && time.Now().Before(deadline) {
				if _, err := d.Wait(time.Second, func(c *driver.Completion) {
					if c.Res > 0 {
						got[c.Tag] += string(c.Data)
					}
				}); err != nil {
					t.Fatal(err)
				}
			}
			for i := range n {
				if got[driver.Tag(i+1)] != string(rune('a'+i)) {
					t.Fatalf("receives: %v", got)
				}
			}
			// Now n sends, prepared together, and the peers' receives.
			before := b.stats.enters
			flushes := b.stats.flushes
			for i, fds := range ps {
				d.Send(fds[1], driver.Tag(100+i), []byte("pong"))
			}
			sent := 0
			for sent < n && time.Now().Before(deadline) {
				if _, err := d.Wait(time.Second, func(c *driver.Completion) {
					if c.Tag >= 100 && c.Res == 4 {
						sent++
					}
				}); err != nil {
					t.Fatal(err)
				}
			}
			if sent != n {
				t.Fatalf("%d of %d sends completed", sent, n)
			}
			if e, f := b.stats.enters-before, b.stats.flushes-flushes; e != 1 || f != 1 {
				t.Fatalf("%d sends took %d io_uring_enter in %d flushes, want 1 in 1", n, e, f)
			}
			if b.stats.waited != 0 {
				t.Fatalf("%d flushes waited for a completion that was not posted inline", b.stats.waited)
			}
		})
	}
}

// TestBatchedCancelDuringFlush: receives cancelled by a callback after the
// kernel already performed them (their results come later in the same
// flush) deliver the bytes taken, then end once, with -ECANCELED: nothing
// is lost and no op ends twice.
func TestBatchedCancelDuringFlush(t *testing.T) {
	d, _ := newBatchedWithBatch(t, driver.Config{Parked: true})
	ps := readyPairs(t, 3)
	// The third has no byte, only EOF.
	if _, err := unix.Read(ps[2][1], make([]byte, 1)); err != nil {
		t.Fatal(err)
	}
	unix.Shutdown(ps[2][0], unix.SHUT_WR)
	want := []string{"a", "b", ""}
	for i, fds := range ps {
		d.Recv(fds[1], driver.Tag(i+1))
	}
	data := map[driver.Tag]string{}
	finals := map[driver.Tag][]int32{}
	cancelled := false
	deadline := time.Now().Add(30 * time.Second)
	for len(finals) < 3 && time.Now().Before(deadline) {
		if _, err := d.Wait(time.Second, func(c *driver.Completion) {
			if !c.More {
				finals[c.Tag] = append(finals[c.Tag], c.Res)
				return
			}
			data[c.Tag] += string(c.Data)
			if !cancelled {
				cancelled = true
				for i, fds := range ps {
					d.Cancel(fds[1], driver.Tag(i+1))
				}
			}
		}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range ps {
		tag := driver.Tag(i + 1)
		if data[tag] != want[i] || len(finals[tag]) != 1 || finals[tag][0] != -int32(unix.ECANCELED) {
			t.Fatalf("receive %d: delivered %q, ended with %v; want %q, then ECANCELED once", tag, data[tag], finals[tag], want[i])
		}
	}
}

// TestBatchedGoexitInCallbackLosesNothing: a callback's Goexit leaves the
// rest of a flush's results to the next Wait.
func TestBatchedGoexitInCallbackLosesNothing(t *testing.T) {
	d, err := NewBatched(driver.Config{Parked: true})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	drivertest.GoexitLosesNothing(t, d)
}

// TestBatchedFewOpsAreDirect: a flush of up to three ops is one plain
// system call each, not an io_uring_enter, and delivers the same result a
// ring op would: a send's
// bytes reach the peer, a receive's bytes reach the callback, a receive on
// an empty socket waits for the next edge rather than failing.
func TestBatchedFewOpsAreDirect(t *testing.T) {
	for _, p := range drivertest.Profiles() {
		t.Run(string(p), func(t *testing.T) {
			d, b := newBatchedWithBatch(t, driver.Config{Profile: p, Parked: true})
			fds := readyPairs(t, 1)[0]
			// readyPairs leaves one byte unread on fds[1]; take it first.
			if _, err := unix.Read(fds[1], make([]byte, 1)); err != nil {
				t.Fatal(err)
			}
			enters, direct := b.stats.enters, b.stats.direct
			d.Send(fds[1], 7, []byte("ping"))
			deadline := time.Now().Add(30 * time.Second)
			sent := false
			for !sent && time.Now().Before(deadline) {
				if _, err := d.Wait(time.Second, func(c *driver.Completion) {
					if c.Tag == 7 {
						if c.Res != 4 {
							t.Errorf("send result %d, want 4", c.Res)
						}
						sent = true
					}
				}); err != nil {
					t.Fatal(err)
				}
			}
			buf := make([]byte, 8)
			if n, err := unix.Read(fds[0], buf); err != nil || string(buf[:n]) != "ping" {
				t.Fatalf("peer read %q, %v", buf[:n], err)
			}
			d.Recv(fds[1], 8)
			if _, err := unix.Write(fds[0], []byte("pong")); err != nil {
				t.Fatal(err)
			}
			got := ""
			for got == "" && time.Now().Before(deadline) {
				if _, err := d.Wait(time.Second, func(c *driver.Completion) {
					if c.Tag == 8 && c.Res > 0 {
						got = string(c.Data)
					}
				}); err != nil {
					t.Fatal(err)
				}
			}
			if got != "pong" {
				t.Fatalf("received %q, want pong", got)
			}
			// Three sends prepared before one Wait: one flush.
			const few = 3
			more := readyPairs(t, few)
			done := 0
			for i, fds := range more {
				if _, err := unix.Read(fds[1], make([]byte, 1)); err != nil {
					t.Fatal(err)
				}
				d.Send(fds[1], driver.Tag(100+i), []byte{'x', byte('0' + i)})
			}
			for done < few && time.Now().Before(deadline) {
				if _, err := d.Wait(time.Second, func(c *driver.Completion) {
					if c.Tag >= 100 {
						if c.Res != 2 {
							t.Errorf("send %d result %d, want 2", c.Tag, c.Res)
						}
						done++
					}
				}); err != nil {
					t.Fatal(err)
				}
			}
			for i, fds := range more {
				if n, err := unix.Read(fds[0], buf); err != nil || string(buf[:n]) != string([]byte{'x', byte('0' + i)}) {
					t.Fatalf("peer %d read %q, %v", i, buf[:n], err)
				}
			}
			if got := b.stats.direct - direct; got < 2+few {
				t.Fatalf("%d direct ops, want at least %d (one send, one receive, then %d sends)", got, 2+few, few)
			}
			if e := b.stats.enters - enters; e != 0 {
				t.Fatalf("flushes of up to %d ops took %d io_uring_enter, want 0", few, e)
			}
		})
	}
}
