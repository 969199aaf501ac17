//go:build linux && cgo && !ringloop_nouring

package uring

import (
	"runtime"

	"github.com/ringloop/ringloop/internal/driver"
	"github.com/ringloop/ringloop/internal/liburing"
	"golang.org/x/sys/unix"
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
	msgCtrl uint16 // RecvMsg: control message room
	pinned  bool
	events  uint32
	next    int32 // free list
	p       []byte
	sent    int
	pending int32 // SendMsgs: CQEs still to come
	failed  int32 // SendMsgs: the first failure's result
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

// begin is every op's entry: it allocates the op of kind on fd for t, or
// reports false once the driver is closed, which takes nothing more.
func (d *Driver) begin(kind opKind, fd int, t driver.Tag) (int32, *op, bool) {
	if d.closed.Load() {
		return 0, nil, false
	}
	idx, o := d.ops.alloc(kind, fd, t)
	return idx, o, true
}

// beginData is begin for an op carrying n bytes or messages: with none it
// ends at once, reporting 0, and reports false.
func (d *Driver) beginData(kind opKind, fd int, t driver.Tag, n int) (int32, *op, bool) {
	idx, o, ok := d.begin(kind, fd, t)
	if ok && n == 0 {
		d.finish(idx, o, 0)
		return 0, nil, false
	}
	return idx, o, ok
}

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
	o.sent, o.pending, o.failed = 0, 0, 0
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

// user_data layout. Everything the driver submits has the high bit
// (driver.Reserved) set; a CQE without it was posted by another ring's
// MSG_RING and carries an engine tag. Ops carry opBit, a 30-bit generation
// and a 32-bit slot index; the driver's own requests use fixed values, and
// cancels are silent (the shim drops their
// completions, so they never wake a blocked Wait).
const (
	udReserved = uint64(driver.Reserved)
	udOpBit    = uint64(1) << 62
	udGenMask  = uint64(1)<<30 - 1
	udWake     = udReserved | 1
	udCancel   = liburing.SilentUserData | 2 // consumed by the shim
)

// ud is the user_data of op idx in its generation gen.
func ud(idx int32, gen uint32) uint64 {
	return udReserved | udOpBit | uint64(gen)<<32 | uint64(uint32(idx))
}

// sqe queues an SQE of op idx: opcode on the op's fd, under its user_data;
// the caller fills in the rest.
func (d *Driver) sqe(idx int32, o *op, opcode uint8) *liburing.SQE {
	q := d.push()
	q.Opcode = opcode
	q.FD = o.fd
	q.UserData = ud(idx, o.gen)
	return q
}

// finish makes the driver report op's final completion with res at the
// next Wait (for ops that never reached the kernel or wait in the driver).
func (d *Driver) finish(idx int32, o *op, res int32) {
	o.state = stSynth
	d.synth = append(d.synth, synthEntry{opRef{idx, o.gen}, res})
}

// LiveOps is how many ops hold a slot (tests: none after their owners
// ended). Call it on the loop.
func (d *Driver) LiveOps() int { return d.ops.live }
