//go:build linux && cgo && !ringloop_nouring

package uring

import (
	"fmt"
	"unsafe"

	"github.com/ringloop/ringloop/internal/driver"
	"github.com/ringloop/ringloop/internal/liburing"
	"golang.org/x/sys/unix"
)

// How Wait ends: at its timeout (EXT_ARG, or where the kernel lacks it a
// timeout SQE that the shim adds and reaps itself) or on a Wake, which
// completes the eventfd read the ring always has pending.

var wakeOne = [8]byte{1}

// Wake makes a blocked or the next Wait return: it bumps the eventfd that a
// read in the ring is always waiting on. Safe from any goroutine.
func (d *Driver) Wake() error {
	d.wakeMu.RLock()
	defer d.wakeMu.RUnlock()
	if d.wakeFD < 0 {
		return driver.ErrClosed
	}
	for {
		_, err := unix.Write(d.wakeFD, wakeOne[:])
		switch err {
		case nil, unix.EAGAIN: // EAGAIN: the counter is saturated, a wake is pending anyway
			return nil
		case unix.EINTR:
			continue
		}
		return fmt.Errorf("uring: wake: %w", err)
	}
}

// armWake queues the eventfd read that Wake completes.
func (d *Driver) armWake() {
	q := d.push()
	q.Opcode = liburing.IORingOpRead
	q.FD = int32(d.wakeFD)
	q.Addr = uint64(uintptr(unsafe.Pointer(&d.misc[0])))
	q.Len = 8
	q.UserData = udWake
	d.wakeArm = true
}

// onWake follows the eventfd read's completion: the Wait returns, and the
// read is armed again.
func (d *Driver) onWake(woke *bool) {
	*woke = true
	d.wakeArm = false
	if !d.closed.Load() {
		d.armWake()
	}
}
