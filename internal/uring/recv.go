//go:build linux && cgo && !ringloop_nouring

package uring

import (
	"fmt"
	"strings"
	"unsafe"

	"github.com/ringloop/ringloop/internal/driver"
	"github.com/ringloop/ringloop/internal/liburing"
	"golang.org/x/sys/unix"
)

// recvMode is how Recv runs.
type recvMode uint8

const (
	recvMultiRing  recvMode = iota // multishot recv, registered buffer ring (6.0)
	recvSingleRing                 // re-armed recv, buffer select from a buffer ring (5.19)
	recvPolled                     // readiness poll, then a MSG_DONTWAIT recv into a buffer the driver picks (before 5.19)
	recvPlain                      // re-armed recv into a per-op buffer
)

// recvVariants names each mode's row in the table.
var recvVariants = [...]string{
	recvMultiRing:  "multishot_ring",
	recvSingleRing: "single_ring",
	recvPolled:     "polled",
	recvPlain:      "plain",
}

// forceRecv, when set by a test, picks the receive variant regardless of the
// probe (to cover the fallbacks on this kernel).
var forceRecv *recvMode

// useRecv sizes the receive buffers and applies the recv variant. The
// buffer ring variants register the ring first; where that fails, receives
// are polled.
func (d *Driver) useRecv(v *variant) string {
	cfg := d.cfg
	d.bufs.size = cfg.BufferSize
	if d.bufs.size <= 0 {
		d.bufs.size = defaultBufferSize
	}
	d.bufs.count = cfg.BufferCount
	if d.bufs.count <= 0 {
		d.bufs.count = defaultBufferCount
	}
	d.bufs.count = min(d.bufs.count, maxBufferCount)
	mode := recvPolled
	for m, name := range recvVariants {
		if v.name == name {
			mode = recvMode(m)
		}
	}
	if forceRecv != nil {
		mode = *forceRecv
		v = variantNamed(formRing, "recv", recvVariants[mode])
	}
	line := v.line()
	if mode <= recvSingleRing {
		if err := d.bufs.registerRing(d.ring); err != nil {
			mode = recvPolled
			how, _, _ := strings.Cut(variantNamed(formRing, "recv", "polled").line(), " (")
			line = how + " (buffer ring registration: " + err.Error() + ")"
		}
	}
	d.recv = mode
	f := &d.feat
	f.BufRing = mode <= recvSingleRing
	f.MultishotRecv = mode == recvMultiRing
	f.PolledRecv = mode == recvPolled
	if mode == recvPlain {
		return fmt.Sprintf("%s, %d B a receive", line, d.bufs.size)
	}
	return fmt.Sprintf("%s, %d buffers of %d B", line, d.bufs.count, d.bufs.size)
}

// Recv keeps receiving from fd until cancelled, EOF or an error; Data points
// into driver-owned buffers until the callback returns.
func (d *Driver) Recv(fd int, t driver.Tag) {
	idx, o, ok := d.begin(kindRecv, fd, t)
	if !ok {
		return
	}
	if d.recv == recvPlain && o.rbuf == nil {
		b, err := mmap(d.bufs.size)
		if err != nil {
			d.finish(idx, o, -int32(unix.ENOMEM))
			return
		}
		o.rbuf = b
	}
	d.armRecv(idx, o)
}

func (d *Driver) armRecv(idx int32, o *op) {
	q := d.sqe(idx, o, liburing.IORingOpRecv)
	o.state, o.multi = stLive, false
	switch d.recv {
	case recvMultiRing:
		q.IOPrio = liburing.RecvMultishot
		q.Flags = liburing.IOSQEBufferSelect
		q.BufGroup = d.bufs.bgid
		o.multi = true
	case recvSingleRing:
		q.Flags = liburing.IOSQEBufferSelect
		q.BufGroup = d.bufs.bgid
		q.Len = uint32(d.bufs.size)
	case recvPolled:
		q.Opcode = liburing.IORingOpPollAdd
		q.OpFlags = poll32(unix.POLLIN)
		o.polling = true
	default:
		q.Addr = uint64(uintptr(unsafe.Pointer(&o.rbuf[0])))
		q.Len = uint32(len(o.rbuf))
	}
}

// armPolledRecv follows a recvPolled op's readiness: one receive into
// buffer bid that does not wait (MSG_DONTWAIT), so it completes in the
// io_uring_enter that submits it and holds the buffer only that long.
func (d *Driver) armPolledRecv(idx int32, o *op, bid uint16) {
	q := d.sqe(idx, o, liburing.IORingOpRecv)
	q.Addr = uint64(d.bufs.addr(bid))
	q.Len = uint32(d.bufs.size)
	q.OpFlags = unix.MSG_DONTWAIT
	o.state, o.multi, o.polling, o.bid = stLive, false, false, bid
}

// onRecv reports received bytes and gives their buffer back once the
// callback returned; a receive that found no buffer waits in the driver
// (unpark re-arms it).
func (d *Driver) onRecv(fn func(*driver.Completion), idx int32, o *op, c *liburing.CQE) int {
	if d.recv == recvPolled {
		return d.onPolledRecv(fn, idx, o, c.Res)
	}
	res, more := c.Res, c.Flags&liburing.CQEFMore != 0
	hasBuf := c.Flags&liburing.CQEFBuffer != 0
	bid := uint16(c.Flags >> liburing.CQEBufferShift)
	if res > 0 {
		var data []byte
		if hasBuf {
			data = d.bufs.data(bid, res)
		} else {
			data = o.rbuf[:res]
		}
		d.emit(fn, o.tag, res, true, data)
		if hasBuf {
			d.giveBack(bid)
		}
		if more {
			return 1
		}
		return 1 + d.rearmOrEnd(fn, idx, o)
	}
	if hasBuf {
		d.giveBack(bid)
	}
	if more {
		return 0
	}
	if res == eNoBufs {
		if o.cancel {
			return d.final(fn, idx, o, eCanceled)
		}
		d.park(idx, o)
		return 0
	}
	return d.final(fn, idx, o, res) // EOF (0), -ECANCELED or an error
}

// onPolledRecv follows a recvPolled op: its readiness poll fired (lend a
// buffer and receive, or wait for one), or its receive ended (report the
// data, give the buffer back, poll again).
func (d *Driver) onPolledRecv(fn func(*driver.Completion), idx int32, o *op, res int32) int {
	if o.polling {
		switch {
		case res < 0: // -ECANCELED or an error
			return d.final(fn, idx, o, res)
		case o.cancel:
			return d.final(fn, idx, o, eCanceled)
		}
		bid, ok := d.bufs.take()
		if !ok {
			d.park(idx, o)
			return 0
		}
		d.armPolledRecv(idx, o, bid)
		return 0
	}
	if res > 0 {
		d.emit(fn, o.tag, res, true, d.bufs.data(o.bid, res))
		d.giveBack(o.bid)
		return 1 + d.rearmOrEnd(fn, idx, o)
	}
	d.giveBack(o.bid)
	if res == -int32(unix.EAGAIN) { // readiness someone else consumed
		return d.rearmOrEnd(fn, idx, o)
	}
	return d.final(fn, idx, o, res) // EOF (0), -ECANCELED or an error
}

// park makes a receive that found no free buffer wait in the driver.
func (d *Driver) park(idx int32, o *op) {
	d.stats.NoBufs++
	o.state = stParked
	d.parked = append(d.parked, opRef{idx, o.gen})
}

// unpark re-arms receives parked without a buffer (ENOBUFS, or an empty
// recvPolled free list): by now every callback has returned its buffer,
// and the next Run publishes them before it preps the re-armed receives.
func (d *Driver) unpark() {
	if len(d.parked) == 0 {
		return
	}
	for _, r := range d.parked {
		o := d.ops.at(r.idx)
		if o.inUse && o.gen == r.gen && o.state == stParked {
			rearms[o.kind](d, r.idx, o)
		}
	}
	d.parked = d.parked[:0]
}

// Recv queues a receive for the epoll+io_uring driver into the next free
// buffer of the batch.
func (b *ringBatch) Recv(fd int, key uint64) bool {
	if b.nrecv == b.count {
		return false
	}
	buf := int32(b.nrecv)
	b.nrecv++
	b.push(key, buf, batchOp{nr: unix.SYS_RECVFROM, sqe: liburing.SQE{Opcode: liburing.IORingOpRecv, FD: int32(fd),
		Addr: uint64(uintptr(unsafe.Pointer(&b.bufs[int(buf)*b.size]))), Len: uint32(b.size), OpFlags: unix.MSG_DONTWAIT}})
	return true
}
