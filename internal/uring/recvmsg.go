//go:build linux && cgo && !ringloop_nouring

package uring

import (
	"fmt"
	"unsafe"

	"github.com/ringloop/ringloop/internal/driver"
	"github.com/ringloop/ringloop/internal/liburing"
	"golang.org/x/sys/unix"
)

// Datagram receives (driver.MsgReceiver): multishot RECVMSG into a buffer
// ring of their own, registered with the first RecvMsg. Their buffers hold
// a whole datagram (a UDP one is at most 65535 bytes) behind the
// io_uring_recvmsg_out header, the source and the control messages, where
// the stream receives' ring has buffers of BufferSize; a loop without
// datagram sockets maps none of it. A burst beyond the buffers waits in the
// socket: the RECVMSG ends with ENOBUFS and waits in the driver until the
// buffers come back, at the next Wait.
const (
	dgramBgid    = 1      // the stream receives' ring is group 0
	dgramBidBase = 0x8000 // datagram buffer ids start here (stream ids stay below maxBufferCount)
	dgramBufMax  = 128    // the most datagram buffers (BufferCount, if lower, sets their number)
	dgramBufSize = 68 << 10
	msgOutSize   = 16 // struct io_uring_recvmsg_out
	msgNameRoom  = unix.SizeofSockaddrAny
	// dgramRoom is the payload a buffer holds whole with control room kept.
	dgramRoom = dgramBufSize - msgOutSize - msgNameRoom - driver.MsgControlRoom
)

// msgOut is struct io_uring_recvmsg_out, at the start of each buffer.
type msgOut struct {
	namelen, controllen, payloadlen, flags uint32
}

// dgramPool is the datagram buffer ring and its buffers, both mmapped.
type dgramPool struct {
	on      bool // the recvmsg variant is multishot: RecvMsg is served
	ring    []byte
	mem     []byte
	count   int
	entries uint32
	rets    []uint16 // buffer ids to hand back before the next Run
	failed  error    // the ring could not be set up: RecvMsg fails with it
	msg     driver.Msg
}

// useRecvMsg applies the recvmsg variant.
func (d *Driver) useRecvMsg(v *variant) string {
	d.dgram.on = v.name == "multishot_ring"
	if !d.dgram.on {
		return v.line()
	}
	return fmt.Sprintf("%s (%d buffers of %d KiB)", v.line(), min(d.bufs.count, dgramBufMax), dgramBufSize>>10)
}

// RecvMsgRoom is the longest payload a RecvMsg completion carries whole, or
// 0 when datagrams are not received through the ring here.
func (d *Driver) RecvMsgRoom() int {
	if !d.dgram.on || d.dgram.failed != nil {
		return 0
	}
	return dgramRoom
}

// start maps and registers the ring, all its buffers lent.
func (p *dgramPool) start(r *liburing.Ring, count int) error {
	if p.ring != nil || p.failed != nil {
		return p.failed
	}
	p.count = min(count, dgramBufMax)
	mem, err := mmap(p.count * dgramBufSize)
	if err != nil {
		p.failed = err
		return err
	}
	b := bufPool{count: p.count, bgid: dgramBgid}
	ring, entries, err := b.newRing(r)
	if err != nil {
		unix.Munmap(mem)
		p.failed = err
		return err
	}
	p.ring, p.mem, p.entries = ring, mem, entries
	p.rets = make([]uint16, 0, p.count)
	for i := range p.count {
		p.rets = append(p.rets, uint16(dgramBidBase+i))
	}
	p.give()
	return nil
}

// give publishes the returned buffers.
func (p *dgramPool) give() {
	if len(p.rets) == 0 {
		return
	}
	liburing.GiveBufs(uintptr(unsafe.Pointer(&p.ring[0])), uintptr(unsafe.Pointer(&p.mem[0])), dgramBufSize, p.entries,
		dgramBidBase, p.rets)
	p.rets = p.rets[:0]
}

// buf is buffer bid's first n bytes.
func (p *dgramPool) buf(bid uint16, n int32) []byte {
	off := int(bid-dgramBidBase) * dgramBufSize
	return p.mem[off : off+int(n) : off+dgramBufSize]
}

func (p *dgramPool) free() {
	for _, m := range [][]byte{p.mem, p.ring} {
		if m != nil {
			unix.Munmap(m)
		}
	}
	p.mem, p.ring = nil, nil
}

// RecvMsg keeps receiving datagrams from fd (driver.MsgReceiver). Its
// msghdr, which says how much room the source and the control messages
// get in each buffer, lives in the op slot's sockaddr room (outside the Go
// heap) until the op ends.
func (d *Driver) RecvMsg(fd int, t driver.Tag, ctrl bool) {
	idx, o, ok := d.begin(kindRecvMsg, fd, t)
	if !ok {
		return
	}
	if !d.dgram.on {
		d.finish(idx, o, -int32(unix.EOPNOTSUPP))
		return
	}
	sa, err := d.ops.sockaddr(idx)
	if err == nil {
		err = d.dgram.start(d.ring, d.bufs.count)
	}
	if err != nil {
		d.finish(idx, o, -int32(unix.ENOMEM))
		return
	}
	h := (*unix.Msghdr)(unsafe.Pointer(&sa[0]))
	*h = unix.Msghdr{Namelen: msgNameRoom}
	o.msgCtrl = 0
	if ctrl {
		o.msgCtrl = driver.MsgControlRoom
	}
	h.SetControllen(int(o.msgCtrl))
	d.armRecvMsg(idx, o)
}

func (d *Driver) armRecvMsg(idx int32, o *op) {
	sa, _ := d.ops.sockaddr(idx) // mapped by RecvMsg
	q := d.sqe(idx, o, liburing.IORingOpRecvmsg)
	q.Addr = uint64(uintptr(unsafe.Pointer(&sa[0])))
	q.Len = 1
	// MSG_TRUNC: payloadlen is the datagram's length, not what was copied.
	q.OpFlags = unix.MSG_TRUNC
	q.IOPrio = liburing.RecvMultishot
	q.Flags = liburing.IOSQEBufferSelect
	q.BufGroup = dgramBgid
	o.state, o.multi = stLive, true
}

// onRecvMsg reports a datagram and gives its buffer back once the callback
// returned; the SQE ends on an error (final: the engine decides whether to
// arm again), on a lack of buffers (the op waits in the driver) or at the
// kernel's whim (re-armed).
func (d *Driver) onRecvMsg(fn func(*driver.Completion), idx int32, o *op, c *liburing.CQE) int {
	res, more := c.Res, c.Flags&liburing.CQEFMore != 0
	n := 0
	if c.Flags&liburing.CQEFBuffer != 0 {
		bid := uint16(c.Flags >> liburing.CQEBufferShift)
		if res >= 0 {
			n = d.emitMsg(fn, o, d.dgram.buf(bid, res))
		}
		d.giveBack(bid)
		if res >= 0 {
			if more {
				return n
			}
			return n + d.rearmOrEnd(fn, idx, o)
		}
	}
	if more {
		return n
	}
	if res == eNoBufs {
		if o.cancel {
			return d.final(fn, idx, o, eCanceled)
		}
		d.park(idx, o)
		return 0
	}
	return d.final(fn, idx, o, res)
}

// emitMsg parses one buffer (io_uring_recvmsg_out, the source, the control
// messages, the payload) and reports it; a buffer too short for its own
// layout is dropped (the kernel never writes one).
func (d *Driver) emitMsg(fn func(*driver.Completion), o *op, b []byte) int {
	head := msgOutSize + msgNameRoom + int(o.msgCtrl)
	if len(b) < head {
		return 0
	}
	out := (*msgOut)(unsafe.Pointer(&b[0]))
	m := &d.dgram.msg
	m.Name = b[msgOutSize : msgOutSize+msgNameRoom]
	m.NameLen = out.namelen
	ctl := msgOutSize + msgNameRoom
	m.Control = b[ctl : ctl+int(min(out.controllen, uint32(o.msgCtrl)))]
	m.Size, m.Flags = int(out.payloadlen), int32(out.flags)
	c := &d.comp
	c.Msg = m
	d.emit(fn, o.tag, int32(len(b)-head), true, b[head:])
	c.Msg = nil
	m.Name, m.Control = nil, nil
	return 1
}

var _ driver.MsgReceiver = (*Driver)(nil)
