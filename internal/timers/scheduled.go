package timers

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime/debug"
	"sync/atomic"
	"time"

	"github.com/ringloop/ringloop/tasks"
)

// Kind says whether and how a Scheduled repeats (Netty's periodNanos sign).
type Kind uint8

const (
	// OneShot runs once after its delay.
	OneShot Kind = iota
	// FixedRate runs every period measured from the previous deadline:
	// next = previous deadline + period. After a stall it runs back to back
	// (one run per PollDue) until it has caught up, as Netty does.
	FixedRate
	// FixedDelay runs again period after the end of the previous run:
	// next = end of run + period.
	FixedDelay
)

// String names the kind.
func (k Kind) String() string {
	switch k {
	case OneShot:
		return "one-shot"
	case FixedRate:
		return "fixed-rate"
	case FixedDelay:
		return "fixed-delay"
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// Scheduled states.
const (
	statePending   int32 = iota // armed, or handed out by PollDue and not yet run
	stateRunning                // the user task runs
	stateDone                   // one-shot finished
	stateFailed                 // the task panicked
	stateCancelled              // Cancel or CancelAll won
)

// Scheduled is a task scheduled on a Heap with a future: the future
// Loop.Schedule, ScheduleAtFixedRate and ScheduleWithFixedDelay return
// (Netty's ScheduledFutureTask). It implements tasks.Future[struct{}]: the future
// succeeds when a one-shot task returns, fails with a *tasks.PanicError when the
// task panics, and is cancelled by Cancel or CancelAll. A periodic task's
// future completes only by failing or being cancelled.
//
// Panics: a task that panics (one-shot or periodic) stops repeating, its
// future fails with *PanicError, and the panic is then re-raised with the
// original value, so the loop's own recovery reports it like any task panic.
type Scheduled struct {
	timer    Timer
	h        *Heap
	task     tasks.Task
	period   int64
	kind     Kind
	state    atomic.Int32
	deadline atomic.Int64 // mirror of timer.deadline for Delay from any goroutine
	// p is embedded by value (one allocation per Scheduled); it has no
	// executor, so Await and AddListener supply the owner themselves.
	p tasks.Promise[struct{}]
}

// errGoexit fails the future of a task that called runtime.Goexit.
var errGoexit = errors.New("timers: scheduled task called runtime.Goexit")

// NewScheduled creates a scheduled task without touching the heap, so any
// goroutine may call it; the deadline is measured from now on h's clock. Its
// AddTask must then run on the owning loop to arm it. The engine schedules
// from a foreign goroutine with:
//
//	s := timers.NewScheduled(h, task, delay, period, kind)
//	if err := owner.Execute(s.AddTask()); err != nil { s.Fail(err) }
//
// A delay <= 0 is due at once; huge delays saturate at Never. period is
// ignored for OneShot and must be > 0 otherwise. NewScheduled panics on a nil
// task, a bad kind or a non-positive period, as time.NewTicker does: these are
// programming errors.
func NewScheduled(h *Heap, task tasks.Task, delay, period time.Duration, kind Kind) *Scheduled {
	if task == nil {
		panic("timers: nil task")
	}
	switch kind {
	case OneShot:
		period = 0
	case FixedRate, FixedDelay:
		if period <= 0 {
			panic(fmt.Sprintf("timers: %v period %v (expected > 0)", kind, period))
		}
	default:
		panic(fmt.Sprintf("timers: bad kind %d", uint8(kind)))
	}
	s := &Scheduled{h: h, task: task, period: int64(period), kind: kind}
	d := DeadlineAfter(h.clock(), delay)
	s.timer.deadline = d
	s.deadline.Store(d)
	s.timer.task = (*runner)(s)
	return s
}

// AddTask returns the task that arms s on its heap; it must run on the owning
// loop. It does nothing if s was cancelled or already armed.
func (s *Scheduled) AddTask() tasks.Task { return (*adder)(s) }

// Fail fails the future of a Scheduled that could not be armed (for example
// because the owner rejected AddTask after shutdown). It reports whether it
// changed anything.
func (s *Scheduled) Fail(err error) bool {
	if err == nil {
		panic("timers: Scheduled.Fail(nil)")
	}
	if !s.state.CompareAndSwap(statePending, stateFailed) {
		return false
	}
	return s.p.Fail(err)
}

// Schedule runs task once after delay. Call it on the owning loop.
func (h *Heap) Schedule(task tasks.Task, delay time.Duration) *Scheduled {
	s := NewScheduled(h, task, delay, 0, OneShot)
	s.arm()
	return s
}

// ScheduleAtFixedRate runs task after initial, then every period from the
// previous deadline (see FixedRate). Call it on the owning loop.
func (h *Heap) ScheduleAtFixedRate(task tasks.Task, initial, period time.Duration) *Scheduled {
	s := NewScheduled(h, task, initial, period, FixedRate)
	s.arm()
	return s
}

// ScheduleWithFixedDelay runs task after initial, then delay after the end of
// each run (see FixedDelay). Call it on the owning loop.
func (h *Heap) ScheduleWithFixedDelay(task tasks.Task, initial, delay time.Duration) *Scheduled {
	s := NewScheduled(h, task, initial, delay, FixedDelay)
	s.arm()
	return s
}

// arm inserts s into its heap (on the loop).
func (s *Scheduled) arm() {
	if s.state.Load() != statePending || s.timer.Pending() {
		return
	}
	s.h.Start(&s.timer, s.timer.deadline)
}

// Kind returns how s repeats.
func (s *Scheduled) Kind() Kind { return s.kind }

// Period returns the period of a periodic task, 0 for a one-shot.
func (s *Scheduled) Period() time.Duration { return time.Duration(s.period) }

// Deadline returns the next (or last) deadline on the heap's clock. Safe from
// any goroutine.
func (s *Scheduled) Deadline() int64 { return s.deadline.Load() }

// Delay returns the time left until the deadline, never negative (Netty's
// getDelay). Safe from any goroutine.
func (s *Scheduled) Delay() time.Duration {
	d := s.deadline.Load() - s.h.clock()
	if d < 0 {
		return 0
	}
	return time.Duration(d)
}

// Cancel cancels s and reports whether this call did it. A one-shot task that
// already started cannot be cancelled; a periodic one can, even while it runs
// (it then does not repeat). Safe from any goroutine: s is marked cancelled
// atomically, so IsCancelled and the future are right at once; the removal
// from the heap runs on the owning loop, directly if the caller is on it,
// otherwise through owner.Execute. If the owner rejects that task (shut
// down), the entry stays until the heap meets it: PollDue and NextDeadline
// drop cancelled entries, CancelAll drops everything.
func (s *Scheduled) Cancel() bool {
	if !s.cancel() {
		return false
	}
	h := s.h
	if h.owner == nil || h.owner.InEventLoop() {
		h.Stop(&s.timer)
	} else {
		_ = h.owner.Execute((*remover)(s))
	}
	return true
}

// cancel marks s cancelled and completes the future; no heap access.
func (s *Scheduled) cancel() bool {
	for {
		st := s.state.Load()
		if st != statePending && (st != stateRunning || s.kind == OneShot) {
			return false
		}
		if s.state.CompareAndSwap(st, stateCancelled) {
			s.p.Cancel()
			return true
		}
	}
}

// IsCancelled reports whether s was cancelled.
func (s *Scheduled) IsCancelled() bool { return s.state.Load() == stateCancelled }

// IsDone reports whether the future is complete (success, failure or
// cancellation).
func (s *Scheduled) IsDone() bool { return s.p.IsDone() }

// Await waits for the future or ctx. On the owning loop it returns
// tasks.ErrDeadlock instead of waiting: the loop would wait for itself.
func (s *Scheduled) Await(ctx context.Context) (struct{}, error) {
	if !s.p.IsDone() && s.h.owner != nil && s.h.owner.InEventLoop() {
		return struct{}{}, tasks.ErrDeadlock
	}
	return s.p.Await(ctx)
}

// Poll returns the result without waiting; done is false while pending.
func (s *Scheduled) Poll() (v struct{}, done bool, err error) { return s.p.Poll() }

// Err returns the future's error: nil while pending or after success.
func (s *Scheduled) Err() error { return s.p.Err() }

// AddListener calls fn with s once the future completes, on ex; a nil ex
// means the heap's owner (see tasks.Future).
func (s *Scheduled) AddListener(ex tasks.Executor, fn func(tasks.Future[struct{}])) {
	if ex == nil {
		ex = s.h.owner
	}
	s.p.AddListener(ex, func(tasks.Future[struct{}]) { fn(s) })
}

var _ tasks.Future[struct{}] = (*Scheduled)(nil)

// runner is what PollDue hands out for a Scheduled: it runs the user task on
// the loop, completes the future and re-arms periodic tasks.
type runner Scheduled

// Run runs the scheduled task once.
func (r *runner) Run() {
	s := (*Scheduled)(r)
	if !s.state.CompareAndSwap(statePending, stateRunning) {
		return // cancelled after PollDue handed it out
	}
	ok := false
	defer func() {
		if ok {
			return
		}
		v := recover()
		s.state.Store(stateFailed)
		if v == nil { // runtime.Goexit
			s.p.Fail(errGoexit)
			return
		}
		s.p.Fail(&tasks.PanicError{Value: v, Stack: debug.Stack()})
		panic(v)
	}()
	s.task.Run()
	ok = true
	if s.kind == OneShot {
		s.state.Store(stateDone)
		s.p.Succeed(struct{}{})
		return
	}
	var next int64
	if s.kind == FixedRate {
		next = s.timer.deadline
		if next > math.MaxInt64-s.period {
			next = Never
		} else {
			next += s.period
		}
	} else {
		next = DeadlineAfter(s.h.clock(), time.Duration(s.period))
	}
	s.deadline.Store(next)
	if !s.state.CompareAndSwap(stateRunning, statePending) {
		return // cancelled while running
	}
	s.h.Start(&s.timer, next)
}

// adder arms a Scheduled created by NewScheduled; it runs on the loop.
type adder Scheduled

// Run arms the scheduled task.
func (a *adder) Run() { (*Scheduled)(a).arm() }

// remover removes a Scheduled cancelled from another goroutine; it runs on
// the loop.
type remover Scheduled

// Run removes the entry if it is still in the heap.
func (r *remover) Run() { r.h.Stop(&r.timer) }

// scheduledOf returns the Scheduled behind a heap entry, or nil for a plain
// Timer.
func scheduledOf(t *Timer) *Scheduled {
	if r, ok := t.task.(*runner); ok {
		return (*Scheduled)(r)
	}
	return nil
}

// cancelledEntry reports whether t belongs to a Scheduled cancelled from
// another goroutine whose removal has not run yet.
func cancelledEntry(t *Timer) bool {
	s := scheduledOf(t)
	return s != nil && s.state.Load() == stateCancelled
}
