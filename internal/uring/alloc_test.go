//go:build linux && cgo && !ringloop_nouring

package uring

import (
	"testing"

	"github.com/ringloop/ringloop/internal/driver"
	"golang.org/x/sys/unix"
)

// TestZeroAllocs: in steady state an op costs no allocation: a no-op round
// trip, and a send with a multishot receive of its bytes.
func TestZeroAllocs(t *testing.T) {
	forEachProfile(t, func(t *testing.T, p driver.Profile) {
		d := newLocked(t, driver.Config{Profile: p})
		fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer unix.Close(fds[0])
		defer unix.Close(fds[1])
		msg := make([]byte, 64)
		var done, recvd int
		fn := func(c *driver.Completion) {
			switch c.Tag {
			case 1:
				recvd += len(c.Data)
			default:
				done++
			}
		}
		d.Recv(fds[1], 1)
		var tag driver.Tag = 2
		round := func() {
			done, recvd = 0, 0
			d.Nop(tag)
			tag++
			d.Send(fds[0], tag, msg)
			tag++
			for done < 2 || recvd < len(msg) {
				if _, err := d.Wait(driver.WaitForever, fn); err != nil {
					t.Fatal(err)
				}
			}
		}
		for i := 0; i < 100; i++ { // warm up: tables, pinner cache
			round()
		}
		if a := testing.AllocsPerRun(1000, round); a != 0 {
			t.Fatalf("%v allocations per nop + send + receive", a)
		}
	})
}
