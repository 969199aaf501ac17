//go:build linux && cgo && !ringloop_nouring

package uring

import (
	"runtime"
	"unsafe"

	"github.com/ringloop/ringloop/internal/driver"
	"github.com/ringloop/ringloop/internal/liburing"
	"golang.org/x/sys/unix"
)

type opKind uint8

const (
	kindAccept opKind = iota + 1
	kindRecv
	kindSend
	kindConnect
	kindPoll
	kindClose
	kindNop
	kindMsgRing
)

// opState says where an op's current request is.
type opState uint8

const (
	stLive   opState = iota + 1 // an SQE is queued or in the kernel
	stEnded                     // its SQE just ended; the handler decides what next
	stParked                    // a receive waiting for buffers (ENOBUFS)
	stSynth                     // its final completion is made by the driver, pending
)

// op is one logical operation of the engine, which may span several SQEs
// (re-armed single-shot ops, send continuations, ENOBUFS re-arms).
type op struct {
	tag    driver.Tag
	gen    uint32
	fd     int32
	kind   opKind
	state  opState
	inUse  bool
	cancel bool // Cancel was called
	multi  bool // the live SQE is multishot
	// recvPolled: the live SQE is the readiness poll, else the receive
	// into buffer bid.
	polling bool
	bid     uint16
	pinned  bool
	events  uint32
	next    int32 // free list
	p       []byte
	sent    int
	pin     runtime.Pinner
	rbuf    []byte // plain receive buffer (mmapped), kept with the slot
}

const opChunk = 256

// opTable holds ops in fixed chunks (never moved, so Pinners stay put) with
// a free list; slot index and generation form the SQE's user_data.
type opTable struct {
	chunks [][]op
	sa     [][]byte // per chunk: opChunk raw sockaddrs, mmapped on first Connect
	n      int32
	free   int32
	index  tagIndex
	live   int
}

type opRef struct {
	idx int32
	gen uint32
}

type synthEntry struct {
	ref opRef
	res int32
}

func (t *opTable) init() {
	t.free = -1
	t.index = newTagIndex(1024)
}

func (t *opTable) at(idx int32) *op { return &t.chunks[idx/opChunk][idx%opChunk] }

func (t *opTable) alloc(kind opKind, fd int, tag driver.Tag) (int32, *op) {
	var idx int32
	if t.free >= 0 {
		idx = t.free
		t.free = t.at(idx).next
	} else {
		idx = t.n
		if int(idx/opChunk) == len(t.chunks) {
			t.chunks = append(t.chunks, make([]op, opChunk))
			t.sa = append(t.sa, nil)
		}
		t.n++
	}
	o := t.at(idx)
	o.gen = (o.gen + 1) & uint32(udGenMask)
	o.tag, o.fd, o.kind = tag, int32(fd), kind
	o.state, o.inUse, o.cancel, o.multi = stLive, true, false, false
	t.index.put(tag, idx)
	t.live++
	return idx, o
}

func (t *opTable) release(idx int32, o *op) {
	t.index.del(o.tag, idx)
	if o.pinned {
		o.pin.Unpin()
		o.pinned = false
	}
	o.p = nil
	o.inUse = false
	o.state = 0
	o.next = t.free
	t.free = idx
	t.live--
}

// sockaddr returns slot idx's raw sockaddr room, outside the Go heap.
func (t *opTable) sockaddr(idx int32) ([]byte, error) {
	c := idx / opChunk
	if t.sa[c] == nil {
		m, err := mmap(opChunk * sockaddrMax)
		if err != nil {
			return nil, err
		}
		t.sa[c] = m
	}
	off := int(idx%opChunk) * sockaddrMax
	return t.sa[c][off : off+sockaddrMax], nil
}

// freeAll unpins and unmaps everything; the ring must be closed first.
func (t *opTable) freeAll() {
	for _, ch := range t.chunks {
		for i := range ch {
			o := &ch[i]
			if o.pinned {
				o.pin.Unpin()
				o.pinned = false
			}
			o.p = nil
			if o.rbuf != nil {
				unix.Munmap(o.rbuf)
				o.rbuf = nil
			}
		}
	}
	for i, m := range t.sa {
		if m != nil {
			unix.Munmap(m)
			t.sa[i] = nil
		}
	}
}

func ud(idx int32, gen uint32) uint64 {
	return udReserved | udOpBit | uint64(gen)<<32 | uint64(uint32(idx))
}

// Accept keeps accepting on the listening socket fd until cancelled
// (multishot accept, or a single-shot accept re-armed after each result).
func (d *Driver) Accept(fd int, t driver.Tag) {
	if d.closed.Load() {
		return
	}
	idx, o := d.ops.alloc(kindAccept, fd, t)
	d.armAccept(idx, o)
}

func (d *Driver) armAccept(idx int32, o *op) {
	q := d.push()
	q.Opcode = liburing.OpAccept
	if d.acceptMulti {
		q.Opcode = liburing.OpAcceptMulti
	}
	q.FD = o.fd
	q.OpFlags = unix.SOCK_NONBLOCK | unix.SOCK_CLOEXEC
	q.UserData = ud(idx, o.gen)
	o.state, o.multi = stLive, d.acceptMulti
}

// Recv keeps receiving from fd until cancelled, EOF or an error; Data points
// into driver-owned buffers until the callback returns.
func (d *Driver) Recv(fd int, t driver.Tag) {
	if d.closed.Load() {
		return
	}
	idx, o := d.ops.alloc(kindRecv, fd, t)
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
	q := d.push()
	q.FD = o.fd
	q.UserData = ud(idx, o.gen)
	o.state, o.multi = stLive, false
	switch d.recv {
	case recvMultiRing:
		q.Opcode = liburing.OpRecvMulti
		q.SQEFlags = liburing.IOSQEBufferSelect
		q.BufGroup = d.bufs.bgid
		o.multi = true
	case recvSingleRing:
		q.Opcode = liburing.OpRecv
		q.SQEFlags = liburing.IOSQEBufferSelect
		q.BufGroup = d.bufs.bgid
		q.Len = uint32(d.bufs.size)
	case recvPolled:
		q.Opcode = liburing.OpPoll
		q.OpFlags = unix.POLLIN
		o.polling = true
	default:
		q.Opcode = liburing.OpRecv
		q.Addr = uint64(uintptr(unsafe.Pointer(&o.rbuf[0])))
		q.Len = uint32(len(o.rbuf))
	}
}

// armPolledRecv follows a recvPolled op's readiness: one receive into
// buffer bid that does not wait (MSG_DONTWAIT), so it completes in the
// io_uring_enter that submits it and holds the buffer only that long.
func (d *Driver) armPolledRecv(idx int32, o *op, bid uint16) {
	q := d.push()
	q.Opcode = liburing.OpRecv
	q.FD = o.fd
	q.Addr = uint64(d.bufs.addr(bid))
	q.Len = uint32(d.bufs.size)
	q.OpFlags = unix.MSG_DONTWAIT
	q.UserData = ud(idx, o.gen)
	o.state, o.multi, o.polling, o.bid = stLive, false, false, bid
}

// maxSendChunk bounds one send SQE's length (its len field is 32 bits).
const maxSendChunk = 1 << 30

// Send writes all of p to fd, continuing after partial sends. p is pinned
// until the final completion, which reports len(p) or the error.
func (d *Driver) Send(fd int, t driver.Tag, p []byte) {
	if d.closed.Load() {
		return
	}
	idx, o := d.ops.alloc(kindSend, fd, t)
	if len(p) == 0 {
		d.finish(idx, o, 0)
		return
	}
	o.p, o.sent = p, 0
	o.pin.Pin(&p[0])
	o.pinned = true
	d.armSend(idx, o)
}

func (d *Driver) armSend(idx int32, o *op) {
	q := d.push()
	q.Opcode = liburing.OpSend
	q.FD = o.fd
	q.Addr = uint64(uintptr(unsafe.Pointer(&o.p[o.sent])))
	q.Len = uint32(min(len(o.p)-o.sent, maxSendChunk))
	q.OpFlags = unix.MSG_NOSIGNAL
	q.UserData = ud(idx, o.gen)
	o.state = stLive
}

// Connect connects the non-blocking socket fd to sa; the raw sockaddr lives
// outside the Go heap until the completion.
func (d *Driver) Connect(fd int, t driver.Tag, sa unix.Sockaddr) {
	if d.closed.Load() {
		return
	}
	idx, o := d.ops.alloc(kindConnect, fd, t)
	raw, err := d.ops.sockaddr(idx)
	if err != nil {
		d.finish(idx, o, -int32(unix.ENOMEM))
		return
	}
	n, err := encodeSockaddr(sa, raw)
	if err != nil {
		d.finish(idx, o, -int32(err.(unix.Errno)))
		return
	}
	q := d.push()
	q.Opcode = liburing.OpConnect
	q.FD = o.fd
	q.Addr = uint64(uintptr(unsafe.Pointer(&raw[0])))
	q.Off = uint64(n)
	q.UserData = ud(idx, o.gen)
}

// Poll keeps reporting fd's readiness for events until cancelled (multishot
// poll, or a single-shot poll re-armed after each result).
func (d *Driver) Poll(fd int, t driver.Tag, events uint32) {
	if d.closed.Load() {
		return
	}
	idx, o := d.ops.alloc(kindPoll, fd, t)
	o.events = events
	d.armPoll(idx, o)
}

func (d *Driver) armPoll(idx int32, o *op) {
	q := d.push()
	q.Opcode = liburing.OpPoll
	if d.pollMulti {
		q.Opcode = liburing.OpPollMulti
	}
	q.FD = o.fd
	q.OpFlags = o.events
	q.UserData = ud(idx, o.gen)
	o.state, o.multi = stLive, d.pollMulti
}

// CloseFD closes fd through the ring and reports close(2)'s result.
func (d *Driver) CloseFD(fd int, t driver.Tag) {
	if d.closed.Load() {
		return
	}
	idx, o := d.ops.alloc(kindClose, fd, t)
	q := d.push()
	q.Opcode = liburing.OpClose
	q.FD = o.fd
	q.UserData = ud(idx, o.gen)
}

// Nop queues a no-op that completes with Res 0 under t. It measures the
// driver's per-op cost and can serve as a completion-ordered marker.
func (d *Driver) Nop(t driver.Tag) {
	if d.closed.Load() {
		return
	}
	idx, o := d.ops.alloc(kindNop, -1, t)
	q := d.push()
	q.Opcode = liburing.OpNop
	q.UserData = ud(idx, o.gen)
}

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
		q := d.push()
		q.Opcode = liburing.OpCancel
		q.Addr = ud(idx, o.gen)
		q.UserData = udCancel
	case stParked:
		d.finish(idx, o, -int32(unix.ECANCELED))
	}
	// stEnded: the handler running now sees o.cancel; stSynth: its final
	// completion is already on its way.
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
		q.Opcode = liburing.OpCancelFD
		q.FD = int32(fd)
		q.OpFlags = liburing.AsyncCancelAll
		q.UserData = udCancel
	}
}

// finish makes the driver report op's final completion with res at the
// next Wait (for ops that never reached the kernel or wait in the driver).
func (d *Driver) finish(idx int32, o *op, res int32) {
	o.state = stSynth
	d.synth = append(d.synth, synthEntry{opRef{idx, o.gen}, res})
}
