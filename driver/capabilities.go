package driver

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
