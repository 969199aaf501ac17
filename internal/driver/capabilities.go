package driver

import (
	"time"

	"golang.org/x/sys/unix"
)

// Optional capabilities. A driver implements those it has; the engine finds
// them with a type assertion, so it never names a concrete driver.

// Starter is a driver that must be started on the loop's goroutine before
// its first Wait. io_uring's ring starts disabled and is enabled by the
// thread that will submit to it (with SINGLE_ISSUER the only one allowed).
type Starter interface {
	// Enable starts the driver on the calling thread.
	Enable() error
}

// Messenger posts completions on another loop's driver: a loop-to-loop
// message that wakes the target without a task ring or an eventfd write
// (io_uring's IORING_OP_MSG_RING).
type Messenger interface {
	// MsgRing posts {Tag: t, Res: res} on target, which reports it from its
	// Wait like any completion. The message leaves with this driver's next
	// Wait, which then reports {Tag: done, Res: 0} once it is posted, or
	// the errno the kernel refused it with (what it carried must then be
	// dealt with by the sender). It fails at once when the kernel lacks the
	// op, when target is not a driver of the same kind, or when target is
	// not started or closed; the caller then sends through a task ring
	// instead. Target must not replace or close its ring before done.
	MsgRing(target Driver, t Tag, res int32, done Tag) error
}

// Resumer is a driver whose blocking Wait can run the loop's work between
// completion batches and go on waiting, without returning. A parked loop
// sleeps in Go's netpoller, which forgets the fd's readiness each time a
// wait begins, so each new wait must first poll the fd (a system call) for
// what arrived before it; a wait that goes on keeps every edge and needs no
// such poll.
type Resumer interface {
	// WaitResume is Wait, except that after it hands out completions it calls
	// between, the rest of the loop's iteration and the start of the next.
	// If between asks to block again, WaitResume goes on waiting up to the
	// timeout between gives (negative: no limit) as a new Wait would;
	// otherwise it returns. It returns the completions since between last
	// ran. between is not called from a Wait nested in a completion.
	WaitResume(timeout time.Duration, fn func(*Completion), between func() (timeout time.Duration, block bool)) (int, error)
}

// MsgReceiver receives datagrams as completions, each with its source and
// control messages: io_uring's multishot RECVMSG into a provided buffer ring
// (6.0). A datagram socket whose longest datagram fits RecvMsgRoom receives
// through it instead of waiting on readiness for recvmmsg.
type MsgReceiver interface {
	// RecvMsgRoom is the longest payload a RecvMsg completion carries whole;
	// 0 when the kernel (or its profile) lacks the op.
	RecvMsgRoom() int
	// RecvMsg keeps receiving datagrams from fd until cancelled or an error
	// (final): each completion has Res the bytes in Data (the payload, cut
	// at RecvMsgRoom) and Msg the rest. With ctrl the kernel's control
	// messages (up to MsgControlRoom bytes) are kept too. A lack of buffers
	// makes it wait in the driver until buffers come back, not fail: the
	// datagrams wait in the socket's receive buffer meanwhile.
	RecvMsg(fd int, t Tag, ctrl bool)
}

// MsgControlRoom is the control message room of a RecvMsg with ctrl: a
// pktinfo and a TOS or traffic class, each padded.
const MsgControlRoom = 128

// Msg is what a RecvMsg completion tells of its datagram besides the
// payload; like Data it is valid only until the callback returns.
type Msg struct {
	// Name is the source's raw sockaddr (room for a sockaddr_any; NameLen
	// is what the kernel reported).
	Name    []byte
	NameLen uint32
	// Control is the control messages received.
	Control []byte
	// Size is the datagram's length, which may exceed the payload copied
	// (Flags then has MSG_TRUNC).
	Size  int
	Flags int32
}

// MsgSender sends datagrams as ops beside the loop's others: io_uring's
// SENDMSG, one per datagram, linked in order.
type MsgSender interface {
	// SendMsgs sends the datagrams hdrs describe, in order, none waiting
	// for room (MSG_DONTWAIT): the first that fails stops the rest. The
	// headers and what they point to stay untouched (and pinned) until
	// the final completion. A failure is reported at once by an
	// intermediate completion (More) with its -errno; the final
	// completion's Res is how many were sent before it (len(hdrs) when
	// all were): those after it are not sent.
	SendMsgs(fd int, t Tag, hdrs []unix.Msghdr)
}
