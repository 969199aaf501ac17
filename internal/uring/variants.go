//go:build linux && cgo && !ringloop_nouring

package uring

import (
	"fmt"

	"github.com/ringloop/ringloop/internal/driver"
	"github.com/ringloop/ringloop/internal/liburing"
)

// This file is the driver's table: the op kinds and how each is armed again
// and completed, the variants every op family can run as (the kernel
// release that brought each, what the probe must show, the line
// Features.Reasons gives), and the order setup applies them in. The code of
// each family is its own file (accept.go, recv.go, send.go, connect.go,
// poll.go, closefd.go, cancel.go, msgring.go, nop.go, wake.go): its arm,
// what its variants change there, its completion handling and, for
// receives and sends, its batched form. Adding an op is its file and its
// rows here.

// opKind is what an op of the op table is.
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
	kindRecvMsg
	kindSendMsg
	kindCount
)

// rearms says, per op kind, how a single-shot SQE that ended with its op
// still going is armed again (nil: never), and completes how a CQE of the
// op is handled (nil: it is the op's final result). Two tables, not one:
// the completion handlers re-arm through rearms.
var (
	rearms = [kindCount]func(d *Driver, idx int32, o *op){
		kindAccept:  (*Driver).armAccept,
		kindRecv:    (*Driver).armRecv,
		kindPoll:    (*Driver).armPoll,
		kindRecvMsg: (*Driver).armRecvMsg,
	}
	completes = [kindCount]func(d *Driver, fn func(*driver.Completion), idx int32, o *op, c *liburing.CQE) int{
		kindAccept:  (*Driver).onAccept,
		kindRecv:    (*Driver).onRecv,
		kindSend:    (*Driver).onSend,
		kindPoll:    (*Driver).report,
		kindMsgRing: (*Driver).onMsgRing,
		kindRecvMsg: (*Driver).onRecvMsg,
		kindSendMsg: (*Driver).onSendMsg,
	}
)

// required are the opcodes every ring needs (all 5.6): a kernel without one
// of them does not get the io_uring driver.
var required = []struct {
	op   int
	name string
}{
	{liburing.IORingOpNop, "NOP"}, {liburing.IORingOpAccept, "ACCEPT"},
	{liburing.IORingOpRecv, "RECV"}, {liburing.IORingOpSend, "SEND"},
	{liburing.IORingOpConnect, "CONNECT"}, {liburing.IORingOpClose, "CLOSE"},
	{liburing.IORingOpAsyncCancel, "ASYNC_CANCEL"}, {liburing.IORingOpPollAdd, "POLL_ADD"},
	{liburing.IORingOpRead, "READ"}, {liburing.IORingOpTimeout, "TIMEOUT"},
}

// form is which of the two io_uring drivers a variant belongs to.
type form uint8

const (
	formRing  form = iota + 1 // New: the completion ring of a locked loop
	formBatch                 // NewBatched: epoll readiness, ring I/O batched per Wait
)

// release is a kernel version; the zero release is any kernel with the
// required opcodes.
type release struct{ major, minor int }

// variant is one row of the table.
type variant struct {
	form  form
	op    string  // the family, as Features.Reasons names it
	name  string  // which way it runs, as the family's file tells them apart
	since release // the release that brought it: the kernel profile must reach it
	// needs is what the probe must show besides (nil: nothing). Features the
	// probe cannot see are tied to something it can see that came in the
	// same release.
	needs  func(*probed) bool
	reason string // Features.Reasons' line, after "op: "
}

// variants lists each family's variants, best first; a family's last row
// needs nothing, so every family runs somehow.
var variants = []variant{
	{formRing, "wait", "ext_arg", release{5, 11}, hasFeat(liburing.FeatExtArg), "io_uring_enter with EXT_ARG timeout"},
	{formRing, "wait", "timeout_sqe", release{}, nil, "timeout SQE (EXT_ARG needs 5.11)"},
	{formRing, "overflow", "nodrop", release{}, hasFeat(liburing.FeatNoDrop), "FEAT_NODROP, overflow list flushed when the CQ empties"},
	{formRing, "overflow", "drop", release{}, nil, "kernel without FEAT_NODROP may drop CQEs on overflow; size the CQ generously"},
	// Multishot accept came with 5.19, as did IORING_OP_SOCKET.
	{formRing, "accept", "multishot", release{5, 19}, hasOp(liburing.IORingOpSocket), "multishot"},
	{formRing, "accept", "single", release{}, nil, "re-armed single-shot (multishot accept needs 5.19)"},
	// Multishot poll came with 5.13, as did IORING_FEAT_RSRC_TAGS.
	{formRing, "poll", "multishot", release{5, 13}, hasFeat(liburing.FeatRsrcTags), "multishot"},
	{formRing, "poll", "single", release{}, nil, "re-armed single-shot (multishot poll needs 5.13)"},
	// Multishot recv came with 6.0, as did IORING_OP_SEND_ZC. The buffer
	// ring variants also need the ring registered (recv.go); before 5.19 a
	// buffer-select receive holds its buffer while it waits (package doc).
	{formRing, "recv", "multishot_ring", release{6, 0}, hasOp(liburing.IORingOpSendZC), "multishot with a registered buffer ring"},
	{formRing, "recv", "single_ring", release{5, 19}, nil, "re-armed single-shot, buffer select from a registered buffer ring (multishot recv needs 6.0)"},
	{formRing, "recv", "polled", release{}, nil, "readiness poll, then a MSG_DONTWAIT recv into a buffer the driver lends (buffer rings need 5.19; a provided buffer would be held by each waiting receive)"},
	{formRing, "recv", "plain", release{}, nil, "re-armed single-shot into a buffer per op (no provided buffers; tests only)"},
	// Multishot RECVMSG came with 6.0, as did IORING_OP_SEND_ZC. A
	// re-armed single-shot RECVMSG before it would take one datagram per
	// loop iteration and socket, where recvmmsg on readiness takes a batch
	// per system call: those kernels keep recvmmsg (packet/doc.go).
	{formRing, "recvmsg", "multishot_ring", release{6, 0}, hasOp(liburing.IORingOpSendZC),
		"datagrams by multishot RECVMSG into a buffer ring of their own, registered with the first datagram socket; sent with sendmmsg (a SENDMSG per datagram cost the loop more CPU in batches); runs to or from one peer coalesced (UDP GSO and GRO)"},
	{formRing, "recvmsg", "readiness", release{}, nil, "datagrams on readiness with recvmmsg and sendmmsg (multishot RECVMSG needs 6.0; single-shot would take one datagram per iteration); runs to or from one peer coalesced (UDP GSO and GRO)"},
	{formRing, "send", "send", release{}, nil, "one SEND per chunk, continued after partial sends, the buffer pinned until the final completion"},
	// IORING_ASYNC_CANCEL_FD came with 5.19, as did IORING_OP_SOCKET.
	{formRing, "cancel", "by_fd", release{5, 19}, hasOp(liburing.IORingOpSocket), "by user_data; by fd with IORING_ASYNC_CANCEL_FD"},
	{formRing, "cancel", "per_op", release{}, nil, "by user_data, one per op (IORING_ASYNC_CANCEL_FD needs 5.19)"},
	{formRing, "msg_ring", "msg_ring", release{5, 18}, hasOp(liburing.IORingOpMsgRing), "loop-to-loop completions with IORING_OP_MSG_RING"},
	{formRing, "msg_ring", "none", release{}, nil, "unavailable (needs 5.18), use a task ring and Wake"},
	{formRing, "wake", "eventfd", release{}, nil, "eventfd with a pending read"},

	// The epoll+io_uring driver needs RECV and SEND only (5.6): every
	// profile gets the same rows.
	{formBatch, "driver", driver.NameEpollURing, release{}, nil, "readiness from epoll, I/O through the ring (parked loop: completions inline on the calling thread, no poll arming, no task work)"},
	{formBatch, "recv", "dontwait", release{}, nil, "one RECV with MSG_DONTWAIT per ready fd per Wait, all in one io_uring_enter; EAGAIN waits for the next edge"},
	{formBatch, "send", "dontwait", release{}, nil, "one SEND with MSG_DONTWAIT per fd in the same io_uring_enter; EPOLLOUT edge continues partial sends"},
	{formBatch, "recvmsg", "readiness", release{}, nil, "datagrams on readiness with recvmmsg and sendmmsg; runs to or from one peer coalesced (UDP GSO and GRO)"},
	{formBatch, "few ops", "direct", release{}, nil, fmt.Sprintf("a Wait with up to %d RECVs and SENDs does them with recv(2) and send(2), cheaper than one io_uring_enter for so few", directMax)},
}

// ringFamilies are the ring's families in Features.Reasons' order (after the
// setup flags). best is the Features flag that says the family runs its
// first variant (nil: none); the code of the family reads it. use, where a
// variant needs more than that, applies it and returns its Reasons line.
var ringFamilies = []struct {
	op   string
	best func(f *driver.Features) *bool
	use  func(d *Driver, v *variant) string
}{
	{"wait", func(f *driver.Features) *bool { return &f.ExtArg }, nil},
	{"overflow", func(f *driver.Features) *bool { return &f.NoDrop }, nil},
	{"accept", func(f *driver.Features) *bool { return &f.MultishotAccept }, nil},
	{"poll", func(f *driver.Features) *bool { return &f.MultishotPoll }, nil},
	{"recv", nil, (*Driver).useRecv},
	{"recvmsg", nil, (*Driver).useRecvMsg},
	{"send", nil, nil},
	{"cancel", func(f *driver.Features) *bool { return &f.CancelFD }, nil},
	{"msg_ring", func(f *driver.Features) *bool { return &f.MsgRing }, nil},
	{"wake", nil, nil},
}

// probed is what setup learned of the kernel, masked by the profile.
type probed struct {
	profile  driver.Profile
	features uint32 // IORING_FEAT_*
	ops      [liburing.IORingOpLast]bool
}

func hasOp(op int) func(*probed) bool { return func(k *probed) bool { return k.ops[op] } }
func hasFeat(bit uint32) func(*probed) bool {
	return func(k *probed) bool { return k.features&bit != 0 }
}

// pick returns op's first variant in form that the profile allows and the
// probe confirms.
func (k *probed) pick(f form, op string) *variant {
	for i := range variants {
		v := &variants[i]
		if v.form != f || v.op != op {
			continue
		}
		if v.since.major > 0 && !k.profile.AtLeast(v.since.major, v.since.minor) {
			continue
		}
		if v.needs == nil || v.needs(k) {
			return v
		}
	}
	panic("uring: no variant of " + op) // each family's last row needs nothing
}

// best reports whether v is its family's first variant.
func (v *variant) best() bool {
	for i := range variants {
		if w := &variants[i]; w.form == v.form && w.op == v.op {
			return w == v
		}
	}
	return false
}

// variantNamed returns the row of op's variant name in form.
func variantNamed(f form, op, name string) *variant {
	for i := range variants {
		if v := &variants[i]; v.form == f && v.op == op && v.name == name {
			return v
		}
	}
	panic("uring: no variant " + op + " " + name)
}

// line is the variant's line in Features.Reasons.
func (v *variant) line() string { return v.op + ": " + v.reason }

// reasons returns the lines of every family of form, each family's first
// variant (the batched form has one per family).
func reasons(f form) []string {
	var out []string
	for i := range variants {
		v := &variants[i]
		if v.form == f && (i == 0 || variants[i-1].op != v.op || variants[i-1].form != f) {
			out = append(out, v.line())
		}
	}
	return out
}
