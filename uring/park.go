//go:build linux && cgo && !ringloop_nouring

package uring

import (
	"fmt"
	"time"

	"github.com/ringloop/ringloop/cgo/liburing"
	"github.com/ringloop/ringloop/driver"
)

// A parked loop (driver.Config.Parked) waits for completions in Go's
// netpoller on the wake eventfd, which is registered with the ring: the
// kernel signals it for every completion it posts and Wake writes it
// directly, so one fd carries both kinds of wake-up.

// registerParkFD registers the wake eventfd of a parked loop with ring r
// and with the netpoller.
func (d *Driver) registerParkFD(r *liburing.Ring) error {
	if !d.cfg.Parked {
		return nil
	}
	if err := r.RegisterEventfd(d.wakeFD); err != nil {
		return fmt.Errorf("uring: IORING_REGISTER_EVENTFD: %w", err)
	}
	// Into the netpoller now, not at the first Wait (see park.Waiter.Use).
	if err := d.park.Use(d.wakeFD); err != nil {
		return fmt.Errorf("uring: %w", err)
	}
	return nil
}

// parkedWait is Wait for a parked loop with a timeout.
func (d *Driver) parkedWait(timeout time.Duration, fn func(*driver.Completion)) (int, error) {
	d.parkFn = fn
	n, err := d.park.Wait(timeout)
	d.parkFn = nil
	return n, err
}

// parkPoll submits and reaps without blocking. It leaves the eventfd's
// count alone: Go's netpoller is edge-triggered, and every signal (a
// completion the kernel posts, a Wake) is a new edge whatever the count, so
// draining it would only cost a read per poll. It goes round again while
// reaping queued work that only the next submission hands to the kernel (a
// partial send's next part, a receive re-armed after ENOBUFS): parking then
// would strand it.
func (d *Driver) parkPoll() (int, error) {
	for {
		n, err := d.Wait(driver.NoWait, d.parkFn)
		if err == nil && n == 0 && d.closed.Load() { // closed by a callback
			err = driver.ErrClosed
		}
		if n > 0 || err != nil || !d.queued() {
			return n, err
		}
	}
}

// queued reports work waiting for the next Wait rather than for the kernel.
func (d *Driver) queued() bool {
	return d.nsq > 0 || d.nret > 0 || len(d.parked) > 0 || len(d.synth) > 0
}
