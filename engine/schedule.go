package engine

import (
	"fmt"
	"time"

	"github.com/ringloop/ringloop/internal/taskq"
	"github.com/ringloop/ringloop/internal/timers"
	"github.com/ringloop/ringloop/tasks"
)

// Loops is one loop or a group of them (a *Loop, or a *loopgroup.Group):
// what every package that serves, dials or schedules takes, so that one loop
// and a group are interchangeable. Handing work to a loop is done through
// it, the same way on both: on a group each call goes to one loop, Next()
// (Netty's EventExecutorGroup), and a loop's Next is itself. Submit, for a
// result, is the one function beside these methods (Go has no generic
// methods). A Loops is a tasks.Executor, so a future's listeners may run on
// it.
type Loops interface {
	// Next returns the loop to take the next connection or task; it is
	// called from any goroutine, on every accept and dial: keep it cheap.
	Next() *Loop
	// InEventLoop reports whether the caller runs on the loop (on a group:
	// on one of its loops).
	InEventLoop() bool
	// Execute queues t to run on the loop (see Loop.Execute).
	Execute(t tasks.Task) error
	// Schedule runs t once on the loop after delay (see Loop.Schedule).
	Schedule(t tasks.Task, delay time.Duration) (tasks.Future[struct{}], error)
	// ScheduleAtFixedRate runs t on the loop at a fixed rate (see
	// Loop.ScheduleAtFixedRate); every run happens on that one loop.
	ScheduleAtFixedRate(t tasks.Task, initial, period time.Duration) (tasks.Future[struct{}], error)
	// ScheduleWithFixedDelay runs t on the loop with a fixed delay between
	// runs (see Loop.ScheduleWithFixedDelay); every run happens on that one
	// loop.
	ScheduleWithFixedDelay(t tasks.Task, initial, delay time.Duration) (tasks.Future[struct{}], error)
}

var _ Loops = (*Loop)(nil)

// Submit runs fn on l.Next() and returns a future of its result (Netty's
// submit); for work with no result, return struct{}{}. If the loop refuses
// the task the future fails with the reason (ErrShutdown, tasks.ErrRejected). The
// future can be cancelled until fn starts, not after. A panic in fn fails
// the future with a *tasks.PanicError (errors.Is(err, tasks.ErrPanicked));
// it is the caller's to see, so the loop neither logs it nor counts it in
// Metrics.Panics. The future belongs to the loop that runs fn: Await there
// returns tasks.ErrDeadlock, and listeners run there by default.
func Submit[T any](l Loops, fn func() (T, error)) tasks.Future[T] {
	if fn == nil {
		return tasks.Failed[T](errNilTask)
	}
	return taskq.Submit(l.Next(), fn)
}

// Schedule runs t once after delay (zero or negative: as soon as possible)
// and returns its future, which can be cancelled from any goroutine. tasks.Func
// adapts a plain function. Scheduling from another goroutine is routed
// through the task ring, and wakes the loop only if the new deadline is
// earlier than the one it sleeps until.
func (l *Loop) Schedule(t tasks.Task, delay time.Duration) (tasks.Future[struct{}], error) {
	return l.schedule(t, delay, 0, timers.OneShot)
}

// ScheduleAtFixedRate runs t after initial, then every period measured from
// the previous deadline: after a stall it runs back to back until it has
// caught up (Netty's fixed rate). Its future completes only when cancelled,
// or failed by a panic, which stops it.
func (l *Loop) ScheduleAtFixedRate(t tasks.Task, initial, period time.Duration) (tasks.Future[struct{}], error) {
	return l.schedule(t, initial, period, timers.FixedRate)
}

// ScheduleWithFixedDelay runs t after initial, then delay after the end of
// each run. Its future completes only when cancelled, or failed by a panic,
// which stops it.
func (l *Loop) ScheduleWithFixedDelay(t tasks.Task, initial, delay time.Duration) (tasks.Future[struct{}], error) {
	return l.schedule(t, initial, delay, timers.FixedDelay)
}

func (l *Loop) schedule(t tasks.Task, delay, period time.Duration, kind timers.Kind) (tasks.Future[struct{}], error) {
	if isNil(t) {
		return nil, errNilTask
	}
	if kind != timers.OneShot {
		if delay < 0 {
			return nil, fmt.Errorf("engine: initial delay %v (expected >= 0)", delay)
		}
		if period <= 0 {
			return nil, fmt.Errorf("engine: %v period %v (expected > 0)", kind, period)
		}
	}
	s := timers.NewScheduled(l.heap, t, delay, period, kind)
	if l.InEventLoop() {
		if l.State() >= Shutdown {
			return nil, ErrShutdown
		}
		s.AddTask().Run()
		return s, nil
	}
	if err := l.offer(l.taskQ, s.AddTask(), false); err != nil {
		s.Fail(err)
		return nil, err
	}
	l.wakeupBefore(s.Deadline())
	return s, nil
}
