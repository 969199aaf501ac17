package drivertest

import (
	"runtime"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/ringloop/ringloop/internal/driver"
)

// GoexitLosesNothing checks that a Wait callback that never returns (a
// handler calling runtime.Goexit) leaves the rest of its batch of
// completions to the next Wait instead of losing them: an accepted fd among
// them would leak, a receive would never be served again.
func GoexitLosesNothing(t *testing.T, d driver.Driver) {
	t.Helper()
	const n = 4
	for i := range n {
		fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer unix.Close(fds[0])
		defer unix.Close(fds[1])
		if _, err := unix.Write(fds[0], []byte("x")); err != nil {
			t.Fatal(err)
		}
		d.Recv(fds[1], driver.Tag(i+1)) // data waiting: one batch completes them all
	}
	got := map[driver.Tag]bool{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = d.Wait(10*time.Second, func(c *driver.Completion) {
			got[c.Tag] = true
			runtime.Goexit()
		})
	}()
	<-done
	if len(got) != 1 {
		t.Fatalf("first Wait delivered %d completions before its callback exited", len(got))
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(got) < n && time.Now().Before(deadline) {
		if _, err := d.Wait(100*time.Millisecond, func(c *driver.Completion) {
			if c.Res > 0 {
				got[c.Tag] = true
			}
		}); err != nil {
			t.Fatal(err)
		}
	}
	if len(got) != n {
		t.Fatalf("%d of %d receives delivered after a callback's Goexit: %v", len(got), n, got)
	}
}
