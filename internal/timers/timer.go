package timers

import "github.com/ringloop/ringloop/tasks"

// Timer is a low-level, reusable timer: the idle, read and write deadlines of
// a connection. It is meant to be embedded in the struct that owns it, so that
// arming, re-arming and stopping it allocate nothing. A Timer belongs to one
// Heap at a time and, like the Heap, is touched only by the owning loop. It
// must not be copied after first use.
//
// A Timer costs 56 bytes and nothing else while it waits in the wheel; it
// takes one more pointer in the exact heap during the tick in which it falls
// due.
type Timer struct {
	_        noCopy
	deadline int64
	seq      uint64 // scheduling order: ties on deadline fire by seq
	next     *Timer // wheel slot list
	prev     *Timer
	task     tasks.Task
	index    int32 // position in the exact heap when loc == locHeap
	loc      int32 // locIdle, locHeap, or wheel slot + 1
}

const (
	locIdle int32 = 0
	locHeap int32 = -1
)

// Init sets the task that runs when the timer fires. PollDue hands exactly
// this value to its callback. Init may be called again to change the task; the
// change applies to the next firing.
func (t *Timer) Init(task tasks.Task) { t.task = task }

// Pending reports whether the timer is armed and has not fired or been
// stopped.
func (t *Timer) Pending() bool { return t.loc != locIdle }

// Deadline returns the deadline the timer was last armed for (monotonic
// nanoseconds, see Now). It stays readable after the timer fired or stopped.
func (t *Timer) Deadline() int64 { return t.deadline }

// Task returns the task set by Init.
func (t *Timer) Task() tasks.Task { return t.task }

// noCopy lets go vet's copylocks check flag copies of a Timer.
type noCopy struct{}

func (*noCopy) Lock()   {}
func (*noCopy) Unlock() {}

// before is the firing order: deadline, then scheduling sequence.
func before(a, b *Timer) bool {
	return a.deadline < b.deadline || (a.deadline == b.deadline && a.seq < b.seq)
}
