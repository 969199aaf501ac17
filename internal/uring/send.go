//go:build linux && cgo && !ringloop_nouring

package uring

import (
	"runtime"
	"unsafe"

	"github.com/ringloop/ringloop/internal/driver"
	"github.com/ringloop/ringloop/internal/liburing"
	"golang.org/x/sys/unix"
)

// maxSendChunk bounds one send SQE's length (its len field is 32 bits).
const maxSendChunk = 1 << 30

// Send writes all of p to fd, continuing after partial sends. p is pinned
// until the final completion, which reports len(p) or the error.
func (d *Driver) Send(fd int, t driver.Tag, p []byte) {
	idx, o, ok := d.beginData(kindSend, fd, t, len(p))
	if !ok {
		return
	}
	o.p, o.sent = p, 0
	o.pin.Pin(&p[0])
	o.pinned = true
	d.armSend(idx, o)
}

func (d *Driver) armSend(idx int32, o *op) {
	q := d.sqe(idx, o, liburing.IORingOpSend)
	q.Addr = uint64(uintptr(unsafe.Pointer(&o.p[o.sent])))
	q.Len = uint32(min(len(o.p)-o.sent, maxSendChunk))
	q.OpFlags = unix.MSG_NOSIGNAL
	o.state = stLive
}

// onSend continues a partial send with the rest; the final completion
// reports every byte sent, or the error.
func (d *Driver) onSend(fn func(*driver.Completion), idx int32, o *op, c *liburing.CQE) int {
	res := c.Res
	if res < 0 {
		return d.final(fn, idx, o, res)
	}
	o.sent += int(res)
	if o.sent < len(o.p) {
		switch {
		case o.cancel:
			return d.final(fn, idx, o, eCanceled)
		case res == 0:
			return d.final(fn, idx, o, -int32(unix.EIO))
		}
		d.armSend(idx, o)
		return 0
	}
	return d.final(fn, idx, o, int32(min(len(o.p), 1<<31-1)))
}

// Send queues a send of p for the epoll+io_uring driver. The flush pins p
// while the ring holds its address (a flush of few ops passes it to send(2)
// instead, which needs no pin: runtime.Pinner costs more than the system
// call saves).
func (b *ringBatch) Send(fd int, p []byte, key uint64) {
	op := batchOp{nr: unix.SYS_SENDTO}
	op.sqe = liburing.SQE{Opcode: liburing.IORingOpSend, FD: int32(fd), OpFlags: unix.MSG_DONTWAIT | unix.MSG_NOSIGNAL}
	if len(p) > 0 {
		op.sqe.Addr = uint64(uintptr(unsafe.Pointer(&p[0])))
		op.sqe.Len = uint32(len(p))
		op.data = &p[0]
	}
	b.push(key, -1, op)
}

// pinsPer is how many pointers a runtime.Pinner holds in its own storage;
// a Pinner given more grows a slice, which its Unpin then drops, so a flush
// of many sends would allocate every time. Each Pinner of the batch is
// given at most this many.
const pinsPer = 5

// pinSends pins the queued sends' buffers, pinsPer to a Pinner.
func (b *ringBatch) pinSends() {
	k := 0
	for i := range b.ops {
		if b.ops[i].data == nil {
			continue
		}
		if k/pinsPer == len(b.pins) {
			b.pins = append(b.pins, runtime.Pinner{}) // grows with the largest batch only
		}
		b.pins[k/pinsPer].Pin(b.ops[i].data)
		k++
	}
}

func (b *ringBatch) unpin() {
	for i := range b.pins {
		b.pins[i].Unpin()
	}
}
