//go:build linux && cgo && !ringloop_nouring

package uring

import (
	"runtime"
	"testing"
	"time"

	"github.com/ringloop/ringloop/internal/driver"
	"golang.org/x/sys/unix"
)

// TestEINTRRetried: signals hitting the loop thread while it blocks in
// Wait(-1) are retried inside; Wait returns only for the Wake.
func TestEINTRRetried(t *testing.T) {
	forEachProfile(t, func(t *testing.T, p driver.Profile) {
		d, err := New(driver.Config{Profile: p})
		if err != nil {
			t.Fatal(err)
		}
		tid := make(chan int)
		type result struct {
			n     int
			err   error
			eintr uint64
		}
		done := make(chan result)
		go func() {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			defer d.Close()
			// Enable first: on 5.10 enabling quiesces the ring (an RCU
			// grace period, long under emulation) and retries each EINTR,
			// so signals sent meanwhile would never reach io_uring_enter.
			if err := d.Enable(); err != nil {
				t.Error(err)
			}
			tid <- unix.Gettid()
			n, err := d.Wait(driver.WaitForever, func(*driver.Completion) {})
			done <- result{n, err, d.Stats().EINTR}
		}()
		thread := <-tid
		pid := unix.Getpid()
		deadline := time.Now().Add(10 * time.Second)
		for i := 0; i < 200 && time.Now().Before(deadline); i++ {
			if err := unix.Tgkill(pid, thread, unix.SIGURG); err != nil {
				t.Fatal(err)
			}
			select {
			case r := <-done:
				t.Fatalf("Wait(-1) returned after a signal: %+v", r)
			case <-time.After(100 * time.Microsecond):
			}
		}
		if err := d.Wake(); err != nil {
			t.Fatal(err)
		}
		r := <-done
		if r.err != nil || r.n != 0 {
			t.Fatalf("Wait: %d, %v", r.n, r.err)
		}
		if r.eintr == 0 {
			t.Fatalf("200 signals to a thread blocked in io_uring_enter caused no EINTR")
		}
		t.Logf("EINTR retried %d times", r.eintr)
	})
}
