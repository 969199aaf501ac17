//go:build linux && cgo && !ringloop_nouring

package uring

import (
	"github.com/ringloop/ringloop/internal/driver"
	"github.com/ringloop/ringloop/internal/liburing"
	"golang.org/x/sys/unix"
)

// Accept keeps accepting on the listening socket fd until cancelled
// (multishot accept, or a single-shot accept re-armed after each result).
func (d *Driver) Accept(fd int, t driver.Tag) {
	if idx, o, ok := d.begin(kindAccept, fd, t); ok {
		d.armAccept(idx, o)
	}
}

func (d *Driver) armAccept(idx int32, o *op) {
	q := d.sqe(idx, o, liburing.IORingOpAccept)
	if d.feat.MultishotAccept {
		q.IOPrio = liburing.AcceptMultishot
	}
	q.OpFlags = unix.SOCK_NONBLOCK | unix.SOCK_CLOEXEC
	o.state, o.multi = stLive, d.feat.MultishotAccept
}

// onAccept reports each new connection (report); a connection that went
// away before it was accepted costs the listener nothing: the accept is
// armed again.
func (d *Driver) onAccept(fn func(*driver.Completion), idx int32, o *op, c *liburing.CQE) int {
	switch c.Res {
	case -int32(unix.ECONNABORTED), -int32(unix.EAGAIN), -int32(unix.EINTR):
		if c.Flags&liburing.CQEFMore != 0 {
			break
		}
		if o.cancel {
			return d.final(fn, idx, o, eCanceled)
		}
		d.armAccept(idx, o)
		return 0
	}
	return d.report(fn, idx, o, c)
}
