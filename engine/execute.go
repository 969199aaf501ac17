package engine

import (
	"context"
	"errors"

	"github.com/ringloop/ringloop/internal/loopctl"
	"github.com/ringloop/ringloop/internal/taskq"
	"github.com/ringloop/ringloop/tasks"
)

// errNilTask rejects a nil task up front (Netty throws NullPointerException).
var errNilTask = errors.New("engine: nil task")

// isNil reports a nil task, or a tasks.Func of a nil function.
func isNil(t tasks.Task) bool {
	f, ok := t.(tasks.Func)
	return t == nil || ok && f == nil
}

// Execute queues t to run on the loop, starting the loop if needed, and wakes
// it if it sleeps. It returns ErrShutdown once the loop has shut down and
// tasks.ErrRejected (wrapped) when a bounded ring is full and the reject policy
// gives up. Tasks from one goroutine run in the order they were queued.
// tasks.Func adapts a plain function; a pre-built task (a pointer type with
// a Run method) costs no allocation.
func (l *Loop) Execute(t tasks.Task) error { return l.offer(l.taskQ, t, true) }

// ExecuteLazy queues t without waking the loop: it runs when the loop next
// wakes for any reason (I/O, a timer, another task). Use it for work that may
// wait, to spare a wake-up (Netty's NonWakeupRunnable).
func (l *Loop) ExecuteLazy(t tasks.Task) error { return l.offer(l.taskQ, t, false) }

// ExecuteAfterIteration queues t on the tail ring, drained after each
// iteration's tasks, even when no task ran, without a time budget: the place
// for per-iteration flushes.
func (l *Loop) ExecuteAfterIteration(t tasks.Task) error { return l.offer(l.tailQ, t, true) }

// control queues t on the loop's control ring (see Loop.ctlQ), the path of
// the library's own work: no user bound applies, so it is refused only once
// the loop has shut down (ErrShutdown), when the caller must still not lose
// what t carries (close the fd, report it). It starts and wakes the loop as
// Execute does.
func (l *Loop) control(t tasks.Task) error { return l.offer(l.ctlQ, t, true) }

// Control queues a task of ringloop's own packages (netconn, httpserver,
// loopgroup) on the loop's control ring, as control does for engine's. It
// is exported only because those packages live outside engine: a
// loopctl.Task can be made only inside this module (its package is
// internal), so a program can pass nothing but the zero Task, which is
// refused with an error. Package internal/loopctl says why this door rather
// than an init-time hook. A loopctl.Ask request is answered at once, with
// the loop's internals (internals.go), instead of queued.
func (l *Loop) Control(t loopctl.Task) error {
	if loopctl.Answer(t, internals{l}) {
		return nil
	}
	return l.control(t.Unwrap())
}

// offer is the one submission path: announce, check state, offer, reject
// policy, lazy start, wake.
func (l *Loop) offer(q taskq.Queue, t tasks.Task, wake bool) error {
	if isNil(t) {
		return errNilTask
	}
	v := l.ctl.Add(ctlOne)
	st := stateOf(v)
	if st >= Shutdown {
		l.ctl.Add(ctlMinusOne)
		return ErrShutdown
	}
	var err error
	if !q.Offer(t) {
		err = l.cfg.reject.Rejected(func() bool { return q.Offer(t) }, l.forceWake, l.InEventLoop())
	}
	l.ctl.Add(ctlMinusOne)
	if err != nil {
		return err
	}
	if st == NotStarted {
		if err := l.start(); err != nil {
			return err
		}
	}
	if wake {
		l.wakeup()
	}
	return nil
}

// wakeup makes a sleeping loop return from its wait. It costs one atomic load
// when the loop is awake, and at most one driver wake per blocking wait
// however many producers call it. The loop itself never needs one (Netty's
// !inEventLoop): a handler runs inside the driver's wait, which returns (or
// runs the loop's work, driver.Resumer) once its callbacks have, so what it
// queued runs before the loop can sleep; a wake would only cost the driver a
// deadline to set and the park an extra round.
func (l *Loop) wakeup() {
	if l.nextWake.Load() == awake || l.InEventLoop() {
		return
	}
	l.forceWake()
}

func (l *Loop) forceWake() {
	if l.nextWake.Swap(awake) != awake {
		l.stats.wakes.Add(1)
		_ = l.drv.Wake()
	}
}

// wakeupBefore wakes the loop only if it sleeps past deadline (a timer
// inserted from another goroutine that is due earlier than the current wait).
func (l *Loop) wakeupBefore(deadline int64) {
	for {
		cur := l.nextWake.Load()
		if cur == awake || deadline >= cur {
			return
		}
		if l.nextWake.CompareAndSwap(cur, awake) {
			l.stats.wakes.Add(1)
			_ = l.drv.Wake()
			return
		}
	}
}

// onLoop runs fn on the loop: directly when called there, else on the
// control ring, waiting for its result (a full task ring cannot refuse it;
// a loop that has shut down returns ErrShutdown).
func (l *Loop) onLoop(fn func() error) error {
	if l.InEventLoop() {
		return fn()
	}
	f := taskq.Submit(controlExecutor{l}, func() (struct{}, error) { return struct{}{}, fn() })
	_, err := f.Await(context.Background())
	return err
}

// controlExecutor runs tasks on l's control ring: taskq.Submit through it
// gives the library's own calls a future that a full task ring cannot fail.
type controlExecutor struct{ *Loop }

func (e controlExecutor) Execute(t tasks.Task) error { return e.control(t) }
