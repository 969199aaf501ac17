//go:build linux && cgo && !ringloop_nouring

package uring

import (
	"github.com/ringloop/ringloop/internal/driver"
	"github.com/ringloop/ringloop/internal/liburing"
	"golang.org/x/sys/unix"
)

// Cancel ends op t: an op in the kernel gets an async cancel (its own
// completion then reports -ECANCELED, or its natural result if it won the
// race); an op waiting in the driver ends with -ECANCELED at the next Wait.
// Cancel itself reports nothing, and does nothing for an op already ended.
func (d *Driver) Cancel(fd int, t driver.Tag) {
	if d.closed.Load() {
		return
	}
	idx, ok := d.ops.index.get(t)
	if !ok {
		return
	}
	d.cancelOp(idx, d.ops.at(idx))
}

func (d *Driver) cancelOp(idx int32, o *op) {
	if o.cancel {
		return
	}
	o.cancel = true
	switch o.state {
	case stLive:
		d.pushCancel(ud(idx, o.gen))
	case stParked:
		d.finish(idx, o, -int32(unix.ECANCELED))
	}
	// stEnded: the handler running now sees o.cancel; stSynth: its final
	// completion is already on its way.
}

// pushCancel queues an async cancel of the request with user_data target.
// Its own completion is silent: the shim drops it.
func (d *Driver) pushCancel(target uint64) {
	q := d.push()
	q.Opcode = liburing.IORingOpAsyncCancel
	q.FD = -1
	q.Addr = target
	q.UserData = udCancel
}

// CancelAll cancels every op on fd (cancel by fd): one
// IORING_ASYNC_CANCEL_FD|ALL where the kernel has it (5.19), else one
// cancel per op. Each op reports its final completion as with Cancel.
func (d *Driver) CancelAll(fd int) {
	if d.closed.Load() {
		return
	}
	kernel := 0
	for ci, ch := range d.ops.chunks {
		for i := range ch {
			o := &ch[i]
			if !o.inUse || o.fd != int32(fd) || o.cancel || o.kind == kindNop {
				continue
			}
			idx := int32(ci*opChunk + i)
			if o.state == stLive && d.feat.CancelFD {
				o.cancel = true
				kernel++
				continue
			}
			d.cancelOp(idx, o)
		}
	}
	if kernel > 0 {
		q := d.push()
		q.Opcode = liburing.IORingOpAsyncCancel
		q.FD = int32(fd)
		q.OpFlags = liburing.AsyncCancelFD | liburing.AsyncCancelAll
		q.UserData = udCancel
	}
}
