//go:build linux && cgo && !ringloop_nouring

package liburing

/*
#include "shim.h"
*/
import "C"

import "unsafe"

// RawRing is a ring's shared memory, for a submitter that writes SQEs and
// reads CQEs from Go and enters the kernel with a raw system call: a
// non-blocking io_uring_enter then costs no cgo call, and the goroutine keeps
// its P (a cgo call is a system call to the scheduler, which may hand the P
// to another thread while it runs). Only one submitter may use a ring this
// way, and never together with Run.
type RawRing struct {
	FD        int
	SQHead    *uint32 // written by the kernel
	SQTail    *uint32
	SQFlags   *uint32 // IORING_SQ_* (CQ_OVERFLOW)
	SQMask    uint32
	SQEntries uint32
	SQArray   unsafe.Pointer // uint32 index per slot
	SQEs      unsafe.Pointer // 64-byte SQEs
	CQHead    *uint32
	CQTail    *uint32 // written by the kernel
	CQMask    uint32
	CQEs      unsafe.Pointer // 16-byte CQEs
}

// A raw submitter writes SQEs and reads CQEs in place, at SQEs + i*SQESize
// and CQEs + i*CQESize (as [SQE] and [CQE]).
const (
	SQESize       = C.sizeof_struct_io_uring_sqe
	CQESize       = C.sizeof_struct_io_uring_cqe
	SQCQOverflow  = C.IORING_SQ_CQ_OVERFLOW
	EnterGetEvent = C.IORING_ENTER_GETEVENTS
)

// Raw returns the ring's shared memory, valid until Close.
func (r *Ring) Raw() RawRing {
	sq, cq := &r.c.ring.sq, &r.c.ring.cq
	return RawRing{
		FD:        int(r.c.ring.ring_fd),
		SQHead:    (*uint32)(unsafe.Pointer(sq.khead)),
		SQTail:    (*uint32)(unsafe.Pointer(sq.ktail)),
		SQFlags:   (*uint32)(unsafe.Pointer(sq.kflags)),
		SQMask:    uint32(*sq.kring_mask),
		SQEntries: uint32(*sq.kring_entries),
		SQArray:   unsafe.Pointer(sq.array),
		SQEs:      unsafe.Pointer(sq.sqes),
		CQHead:    (*uint32)(unsafe.Pointer(cq.khead)),
		CQTail:    (*uint32)(unsafe.Pointer(cq.ktail)),
		CQMask:    uint32(*cq.kring_mask),
		CQEs:      unsafe.Pointer(cq.cqes),
	}
}
