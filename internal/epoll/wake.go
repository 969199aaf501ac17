package epoll

import (
	"encoding/binary"
	"fmt"

	"github.com/ringloop/ringloop/internal/driver"
	"golang.org/x/sys/unix"
)

// wakeMark is the event data of the eventfd (no user fd is negative).
const wakeMark = -1

// wakeVal is the 8-byte value one Wake writes to the eventfd.
var wakeVal = func() (b [8]byte) {
	binary.NativeEndian.PutUint64(b[:], 1)
	return
}()

func (d *Driver) addWake(epfd int) error {
	ev := unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLET, Fd: wakeMark}
	return unix.EpollCtl(epfd, unix.EPOLL_CTL_ADD, d.efd, &ev)
}

// Wake makes a blocked or the next Wait return; safe from any goroutine.
func (d *Driver) Wake() error {
	d.wakers.Add(1)
	defer d.wakers.Add(-1)
	if d.closed.Load() {
		return driver.ErrClosed
	}
	d.park.Wake()
	if d.cfg.Parked && d.rawWaits.Load() == 0 {
		return nil // the Waiter ends a park by itself
	}
	for {
		_, err := unix.Write(d.efd, wakeVal[:])
		switch err {
		case nil, unix.EAGAIN: // EAGAIN: the counter is full, a wake is pending
			return nil
		case unix.EINTR:
			continue
		default:
			return fmt.Errorf("epoll: wake: %w", err)
		}
	}
}

// wakeReason says how Wake reaches a blocked Wait.
func (d *Driver) wakeReason() string {
	if d.cfg.Parked {
		return "wake: a past read deadline on the parked epoll fd readies the loop goroutine with no system call (eventfd only for a Wait inside a callback)"
	}
	return "wake: eventfd, edge-triggered, never read"
}
