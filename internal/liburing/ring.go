//go:build linux && cgo && !ringloop_nouring

package liburing

/*
#cgo LDFLAGS: -l:liburing.a
#include <stdlib.h>
#include "shim.h"
*/
import "C"

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// SQE is one submission queue entry in the kernel's layout (struct
// io_uring_sqe). The Go side writes it whole, in C memory (a [Batch])
// without a cgo call, and [Ring.Run] copies it into the ring as it is: what
// each op's fields hold is the caller's to decide, as liburing's prep
// helpers would (package uring keeps one file per op family).
type SQE struct {
	Opcode      uint8  // IORING_OP_* (the IORingOp constants)
	Flags       uint8  // IOSQE_* flags, e.g. [IOSQEBufferSelect]
	IOPrio      uint16 // an op's own flags: [AcceptMultishot], [RecvMultishot]
	FD          int32
	Off         uint64 // offset, sockaddr length, MSG_RING's user_data
	Addr        uint64 // buffer, sockaddr or (cancel) target user_data
	Len         uint32 // buffer length, [PollAddMulti], MSG_RING's res
	OpFlags     uint32 // msg, accept, poll (see uring's poll32) or cancel flags
	UserData    uint64
	BufGroup    uint16 // buffer group with IOSQEBufferSelect
	Personality uint16
	FileIndex   uint32
	Addr3       uint64
	_           uint64
}

// CQE is one completion in the kernel's layout (struct io_uring_cqe);
// Run copies them out as struct rl_cqe, the same.
type CQE struct {
	UserData uint64
	Res      int32
	Flags    uint32
}

// Stats counts the shim's work on one ring; it mirrors struct rl_stats.
type Stats struct {
	Enters      uint64 // io_uring_enter system calls
	Submitted   uint64 // SQEs prepared
	Completions uint64 // CQEs copied out
	SQFull      uint64 // early submissions because the SQ was full
	Overflow    uint64 // overflow-list flushes
	EINTR       uint64 // interrupted waits retried
	Silent      uint64 // silent completions consumed in C
	SilentErr   uint64 // silent completions that failed (not ENOENT/EALREADY)
}

// The layouts must match the C structs byte for byte.
var (
	_ [unsafe.Sizeof(SQE{}) - C.sizeof_struct_io_uring_sqe]byte
	_ [C.sizeof_struct_io_uring_sqe - unsafe.Sizeof(SQE{})]byte
	_ [unsafe.Offsetof(SQE{}.FD) - unsafe.Offsetof(C.struct_io_uring_sqe{}.fd)]byte
	_ [unsafe.Offsetof(C.struct_io_uring_sqe{}.fd) - unsafe.Offsetof(SQE{}.FD)]byte
	_ [unsafe.Offsetof(SQE{}.Len) - unsafe.Offsetof(C.struct_io_uring_sqe{}.len)]byte
	_ [unsafe.Offsetof(C.struct_io_uring_sqe{}.len) - unsafe.Offsetof(SQE{}.Len)]byte
	_ [unsafe.Offsetof(SQE{}.UserData) - unsafe.Offsetof(C.struct_io_uring_sqe{}.user_data)]byte
	_ [unsafe.Offsetof(C.struct_io_uring_sqe{}.user_data) - unsafe.Offsetof(SQE{}.UserData)]byte
	_ [unsafe.Offsetof(SQE{}.Personality) - unsafe.Offsetof(C.struct_io_uring_sqe{}.personality)]byte
	_ [unsafe.Offsetof(C.struct_io_uring_sqe{}.personality) - unsafe.Offsetof(SQE{}.Personality)]byte
	_ [unsafe.Sizeof(CQE{}) - C.sizeof_struct_rl_cqe]byte
	_ [C.sizeof_struct_rl_cqe - unsafe.Sizeof(CQE{})]byte
	_ [unsafe.Sizeof(CQE{}) - C.sizeof_struct_io_uring_cqe]byte
	_ [C.sizeof_struct_io_uring_cqe - unsafe.Sizeof(CQE{})]byte
	_ [unsafe.Sizeof(Stats{}) - C.sizeof_struct_rl_stats]byte
	_ [C.sizeof_struct_rl_stats - unsafe.Sizeof(Stats{})]byte
)

// Kernel constants from liburing's io_uring.h that the driver needs.
const (
	SetupRDisabled    = C.IORING_SETUP_R_DISABLED
	SetupCoopTaskrun  = C.IORING_SETUP_COOP_TASKRUN
	SetupTaskrunFlag  = C.IORING_SETUP_TASKRUN_FLAG
	SetupSingleIssuer = C.IORING_SETUP_SINGLE_ISSUER
	SetupDeferTaskrun = C.IORING_SETUP_DEFER_TASKRUN

	FeatNoDrop   = C.IORING_FEAT_NODROP
	FeatFastPoll = C.IORING_FEAT_FAST_POLL
	FeatExtArg   = C.IORING_FEAT_EXT_ARG
	FeatRsrcTags = C.IORING_FEAT_RSRC_TAGS

	CQEFBuffer = C.IORING_CQE_F_BUFFER
	CQEFMore   = C.IORING_CQE_F_MORE
	// CQEBufferShift is where a CQE's flags keep the buffer id.
	CQEBufferShift = C.IORING_CQE_BUFFER_SHIFT

	IOSQEBufferSelect = C.IOSQE_BUFFER_SELECT
	IOSQEIOLink       = C.IOSQE_IO_LINK

	// An op's own flags: in IOPrio (accept, recv), Len (poll) or OpFlags
	// (cancel).
	AcceptMultishot = C.IORING_ACCEPT_MULTISHOT
	RecvMultishot   = C.IORING_RECV_MULTISHOT
	PollAddMulti    = C.IORING_POLL_ADD_MULTI
	AsyncCancelFD   = C.IORING_ASYNC_CANCEL_FD
	AsyncCancelAll  = C.IORING_ASYNC_CANCEL_ALL

	// Kernel opcodes: SQE.Opcode, and the index of Probe's answer.
	IORingOpNop            = C.IORING_OP_NOP
	IORingOpPollAdd        = C.IORING_OP_POLL_ADD
	IORingOpTimeout        = C.IORING_OP_TIMEOUT
	IORingOpAccept         = C.IORING_OP_ACCEPT
	IORingOpAsyncCancel    = C.IORING_OP_ASYNC_CANCEL
	IORingOpConnect        = C.IORING_OP_CONNECT
	IORingOpClose          = C.IORING_OP_CLOSE
	IORingOpRead           = C.IORING_OP_READ
	IORingOpSend           = C.IORING_OP_SEND
	IORingOpRecv           = C.IORING_OP_RECV
	IORingOpSendmsg        = C.IORING_OP_SENDMSG
	IORingOpRecvmsg        = C.IORING_OP_RECVMSG
	IORingOpProvideBuffers = C.IORING_OP_PROVIDE_BUFFERS
	IORingOpMsgRing        = C.IORING_OP_MSG_RING
	IORingOpSocket         = C.IORING_OP_SOCKET
	IORingOpSendZC         = C.IORING_OP_SEND_ZC
	IORingOpLast           = C.IORING_OP_LAST

	// SilentUserData, in the top three bits of an SQE's user_data (mask
	// SilentUserDataMask), makes its completion silent: Run consumes it
	// without copying it out and it does not end a wait. For requests whose
	// success needs no reaction (cancels, buffer provisioning); failures are
	// counted in Stats.SilentErr.
	SilentUserData     = uint64(C.RL_UD_SILENT)
	SilentUserDataMask = uint64(C.RL_UD_SILENT_MASK)

	// TimeoutUserData marks the completion of the timeout SQE that Run adds
	// on rings without EXT_ARG; callers skip it.
	TimeoutUserData = uint64(1<<64 - 1)
)

// Params is what io_uring_setup reported.
type Params struct {
	SQEntries uint32
	CQEntries uint32
	Flags     uint32 // setup flags in force
	Features  uint32 // IORING_FEAT_* bits
}

// Ring is one io_uring instance with its liburing state, allocated in C.
type Ring struct {
	c     *C.struct_rl_ring
	stats *Stats
}

// Setup creates a ring with io_uring_setup. cqEntries 0 keeps the kernel's
// default CQ size. The error is the raw unix.Errno of io_uring_setup.
func Setup(entries, cqEntries, flags uint32) (*Ring, error) {
	var cerr C.int
	c := C.rl_setup(C.uint(entries), C.uint(cqEntries), C.uint(flags), &cerr)
	if c == nil {
		return nil, unix.Errno(cerr)
	}
	return &Ring{c: c, stats: (*Stats)(unsafe.Pointer(&c.stats))}, nil
}

// Params reports the ring's sizes, setup flags and features.
func (r *Ring) Params() Params {
	return Params{
		SQEntries: uint32(r.c.params.sq_entries),
		CQEntries: uint32(r.c.params.cq_entries),
		Flags:     uint32(r.c.ring.flags),
		Features:  uint32(r.c.ring.features),
	}
}

// FD is the ring's file descriptor (the target of MSG_RING).
func (r *Ring) FD() int { return int(r.c.ring.ring_fd) }

// SetExtArg chooses how Run waits with a timeout: through EXT_ARG (true,
// the default when the kernel has it) or with a timeout SQE (false, as on
// kernels before 5.11; its completion carries TimeoutUserData).
func (r *Ring) SetExtArg(on bool) {
	if on {
		r.c.ext_arg = 1
	} else {
		r.c.ext_arg = 0
	}
}

// Stats returns the counters; they live in C memory and cost no cgo call.
func (r *Ring) Stats() Stats { return *r.stats }

// Enable starts a ring created with IORING_SETUP_R_DISABLED. With
// SINGLE_ISSUER the calling thread becomes the only one allowed to submit.
func (r *Ring) Enable() error {
	if ret := C.rl_enable(r.c); ret < 0 {
		return unix.Errno(-ret)
	}
	return nil
}

// Probe reports, for each kernel opcode (IORING_OP_*), whether the kernel
// supports it (IORING_REGISTER_PROBE).
func (r *Ring) Probe() ([IORingOpLast]bool, error) {
	var raw [IORingOpLast]uint8
	var out [IORingOpLast]bool
	if ret := C.rl_probe(r.c, (*C.uint8_t)(unsafe.Pointer(&raw[0])), C.int(len(raw))); ret < 0 {
		return out, unix.Errno(-ret)
	}
	for i, v := range raw {
		out[i] = v != 0
	}
	return out, nil
}

// RegisterBufRing registers a provided-buffer ring of entries slots (a power
// of two) at ringAddr (page-aligned memory outside the Go heap) as buffer
// group bgid (IORING_REGISTER_PBUF_RING, 5.19).
func (r *Ring) RegisterBufRing(ringAddr uintptr, entries uint32, bgid uint16) error {
	if ret := C.rl_register_buf_ring(r.c, C.uint64_t(ringAddr), C.uint(entries), C.uint(bgid)); ret < 0 {
		return unix.Errno(-ret)
	}
	return nil
}

// UnregisterBufRing drops buffer group bgid's ring.
func (r *Ring) UnregisterBufRing(bgid uint16) error {
	if ret := C.rl_unregister_buf_ring(r.c, C.uint(bgid)); ret < 0 {
		return unix.Errno(-ret)
	}
	return nil
}

// SetBufRing tells Run where the registered buffer ring and its buffers are
// (buffer id i lives at base + i*size), so that buffer ids passed to Run are
// handed back with io_uring_buf_ring_add and _advance.
func (r *Ring) SetBufRing(ringAddr, base uintptr, size, entries uint32) {
	C.rl_set_buf_ring(r.c, C.uint64_t(ringAddr), C.uint64_t(base), C.uint32_t(size), C.uint32_t(entries))
}

// GiveBufs hands buffers rets back to a buffer ring of entries slots at
// ringAddr that is not the one SetBufRing named (buffer id first+i lives at
// base + i*size): one cgo call for the lot.
func GiveBufs(ringAddr, base uintptr, size, entries uint32, first uint16, rets []uint16) {
	if len(rets) == 0 {
		return
	}
	C.rl_buf_ring_give(C.uint64_t(ringAddr), C.uint64_t(base), C.uint32_t(size), C.uint32_t(entries), C.uint16_t(first),
		(*C.uint16_t)(unsafe.Pointer(&rets[0])), C.int(len(rets)))
}

// InitBufRing resets the tail of a buffer ring before registration.
func InitBufRing(ringAddr uintptr) { C.rl_buf_ring_init(C.uint64_t(ringAddr)) }

// Run is the one cgo call of a loop iteration. It returns the first nret
// buffer ids of b to the buffer ring, copies the first nsqes SQEs of b into
// the ring, submits them, waits up to timeout nanoseconds for a completion
// when none is ready (0: do not wait; negative: until one arrives) and
// copies up to maxCQE (at most len(b.CQEs())) completions into b. It returns
// the number of completions and how many SQEs it could not hand over yet
// (moved to the front of b.SQEs(); only when the kernel refuses submissions
// with EBUSY or EAGAIN).
func (r *Ring) Run(b *Batch, nsqes, nret int, timeout int64, maxCQE int) (n, left int, err error) {
	maxCQE = min(maxCQE, b.ncqe)
	ret := C.rl_run(r.c, b.sqes, C.int(nsqes), b.rets, C.int(nret), C.int64_t(timeout), b.cqes, C.int(maxCQE))
	if ret < 0 {
		return 0, int(r.c.ops_left), unix.Errno(-ret)
	}
	return int(ret), int(r.c.ops_left), nil
}

// Close tears the ring down (io_uring_queue_exit); the kernel cancels what
// is still in flight. The Ring must not be used afterwards.
func (r *Ring) Close() {
	if r.c != nil {
		C.rl_close(r.c)
		r.c = nil
		r.stats = nil
	}
}

// Batch is the C-allocated memory the Go side fills between Runs: SQEs,
// buffer ids to return, and the completion out array.
type Batch struct {
	sqes  *C.struct_io_uring_sqe
	rets  *C.uint16_t
	cqes  *C.struct_rl_cqe
	nsqes int
	nret  int
	ncqe  int
}

// NewBatch allocates a batch for up to nsqes SQEs, nret returned buffers
// and ncqe completions per Run.
func NewBatch(nsqes, nret, ncqe int) *Batch {
	nret = max(nret, 1)
	return &Batch{
		sqes:  (*C.struct_io_uring_sqe)(C.calloc(C.size_t(nsqes), C.sizeof_struct_io_uring_sqe)),
		rets:  (*C.uint16_t)(C.calloc(C.size_t(nret), 2)),
		cqes:  (*C.struct_rl_cqe)(C.calloc(C.size_t(ncqe), C.sizeof_struct_rl_cqe)),
		nsqes: nsqes,
		nret:  nret,
		ncqe:  ncqe,
	}
}

// GrowSQEs makes room for at least n SQEs, keeping the ones written. Only
// the rare high-water mark pays this cgo call.
func (b *Batch) GrowSQEs(n int) {
	if n <= b.nsqes {
		return
	}
	p := C.realloc(unsafe.Pointer(b.sqes), C.size_t(n)*C.sizeof_struct_io_uring_sqe)
	if p == nil {
		panic("liburing: out of memory growing the SQE batch")
	}
	b.sqes = (*C.struct_io_uring_sqe)(p)
	b.nsqes = n
}

// SQEs is the SQE array, in C memory.
func (b *Batch) SQEs() []SQE { return unsafe.Slice((*SQE)(unsafe.Pointer(b.sqes)), b.nsqes) }

// Returns is the array of buffer ids to hand back, in C memory.
func (b *Batch) Returns() []uint16 { return unsafe.Slice((*uint16)(unsafe.Pointer(b.rets)), b.nret) }

// CQEs is the completion out array, in C memory.
func (b *Batch) CQEs() []CQE { return unsafe.Slice((*CQE)(unsafe.Pointer(b.cqes)), b.ncqe) }

// Free releases the batch's memory.
func (b *Batch) Free() {
	if b.sqes != nil {
		C.free(unsafe.Pointer(b.sqes))
		C.free(unsafe.Pointer(b.rets))
		C.free(unsafe.Pointer(b.cqes))
		b.sqes, b.rets, b.cqes = nil, nil, nil
	}
}
