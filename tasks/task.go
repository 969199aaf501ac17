package tasks

// Task is a unit of work for an executor. A pointer type implementing Run is
// stored in the queues as is, so submitting a pre-built task allocates nothing.
type Task interface{ Run() }

// Func adapts a plain func() to Task. A func value is pointer-shaped, so
// converting Func(f) to Task does not allocate (the closure itself may).
type Func func()

// Run calls f.
func (f Func) Run() { f() }

// Executor is what promise listeners run on and what reject policies wake:
// an event loop, or any other single-consumer executor.
type Executor interface {
	// Execute hands t to the executor. It returns an error wrapping
	// ErrRejected when the task queue is full, or ErrShutdown.
	Execute(t Task) error
	// InEventLoop reports whether the caller runs on the executor's own
	// goroutine, where blocking on the executor's work would deadlock.
	InEventLoop() bool
}

// Inline is an Executor that runs every task at once on the caller's
// goroutine. Pass it to AddListener to run a listener where the promise
// completes even when the promise has an executor of its own.
var Inline Executor = inline{}

type inline struct{}

func (inline) Execute(t Task) error { t.Run(); return nil }
func (inline) InEventLoop() bool    { return false }
