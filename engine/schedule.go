package engine

import (
	"fmt"
	"time"

	"github.com/ringloop/ringloop/internal/timers"
	"github.com/ringloop/ringloop/tasks"
)

// Schedule runs t once after delay (zero or negative: as soon as possible)
// and returns its handle: a future that can be cancelled from any goroutine.
// Scheduling from another goroutine is routed through the task ring, and wakes
// the loop only if the new deadline is earlier than the one it sleeps until.
func (l *Loop) Schedule(t tasks.Task, delay time.Duration) (tasks.Future[struct{}], error) {
	return l.schedule(t, delay, 0, timers.OneShot)
}

// ScheduleFunc is Schedule for a plain function.
func (l *Loop) ScheduleFunc(fn func(), delay time.Duration) (tasks.Future[struct{}], error) {
	if fn == nil {
		return nil, errNilTask
	}
	return l.schedule(tasks.Func(fn), delay, 0, timers.OneShot)
}

// ScheduleAtFixedRate runs t after initial, then every period measured from
// the previous deadline: after a stall it runs back to back until it has
// caught up (Netty's fixed rate). A panic stops it and fails its future.
func (l *Loop) ScheduleAtFixedRate(t tasks.Task, initial, period time.Duration) (tasks.Future[struct{}], error) {
	return l.schedule(t, initial, period, timers.FixedRate)
}

// ScheduleWithFixedDelay runs t after initial, then delay after the end of
// each run. A panic stops it and fails its future.
func (l *Loop) ScheduleWithFixedDelay(t tasks.Task, initial, delay time.Duration) (tasks.Future[struct{}], error) {
	return l.schedule(t, initial, delay, timers.FixedDelay)
}

func (l *Loop) schedule(t tasks.Task, delay, period time.Duration, kind timers.Kind) (tasks.Future[struct{}], error) {
	if t == nil {
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

// ScheduleFuncAtFixedRate is ScheduleAtFixedRate for a plain function.
func (l *Loop) ScheduleFuncAtFixedRate(fn func(), initial, period time.Duration) (tasks.Future[struct{}], error) {
	if fn == nil {
		return nil, errNilTask
	}
	return l.ScheduleAtFixedRate(tasks.Func(fn), initial, period)
}

// ScheduleFuncWithFixedDelay is ScheduleWithFixedDelay for a plain function.
func (l *Loop) ScheduleFuncWithFixedDelay(fn func(), initial, delay time.Duration) (tasks.Future[struct{}], error) {
	if fn == nil {
		return nil, errNilTask
	}
	return l.ScheduleWithFixedDelay(tasks.Func(fn), initial, delay)
}
