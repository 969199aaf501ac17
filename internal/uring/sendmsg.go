//go:build linux && cgo && !ringloop_nouring

package uring

import (
	"unsafe"

	"github.com/ringloop/ringloop/internal/driver"
	"github.com/ringloop/ringloop/internal/liburing"
	"golang.org/x/sys/unix"
)

// SendMsgs queues one SENDMSG per header (driver.MsgSender), linked so
// that they run in order and the first failure cancels the rest; each has
// MSG_DONTWAIT, so a full send buffer fails it with EAGAIN at once rather
// than leave it waiting. They go to the kernel with the loop's next Wait,
// beside its other ops. One op spans them all: its CQEs share a user_data.
func (d *Driver) SendMsgs(fd int, t driver.Tag, hdrs []unix.Msghdr) {
	idx, o, ok := d.beginData(kindSendMsg, fd, t, len(hdrs))
	if !ok {
		return
	}
	o.pending = int32(len(hdrs))
	for i := range hdrs {
		q := d.sqe(idx, o, liburing.IORingOpSendmsg)
		q.Addr = uint64(uintptr(unsafe.Pointer(&hdrs[i])))
		q.Len = 1
		q.OpFlags = unix.MSG_DONTWAIT | unix.MSG_NOSIGNAL
		if i < len(hdrs)-1 {
			q.Flags = liburing.IOSQEIOLink
		}
	}
}

// onSendMsg counts one SENDMSG of a SendMsgs: the datagrams sent before
// the first failure, which is reported at once (More); the rest of the
// chain, cancelled by it, is not. The final completion follows the last
// CQE.
func (d *Driver) onSendMsg(fn func(*driver.Completion), idx int32, o *op, c *liburing.CQE) int {
	o.pending--
	n := 0
	switch {
	case o.failed != 0: // cancelled by the failure, or sent after it in a chain the SQ split
	case c.Res >= 0:
		o.sent++
	default:
		o.failed = c.Res
		d.emit(fn, o.tag, c.Res, true, nil)
		n = 1
	}
	if o.pending > 0 {
		o.state = stLive // its other SQEs are still in the kernel
		return n
	}
	return n + d.final(fn, idx, o, int32(o.sent))
}

var _ driver.MsgSender = (*Driver)(nil)
