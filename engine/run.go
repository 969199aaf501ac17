package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/ringloop/ringloop/internal/driver"
	"github.com/ringloop/ringloop/internal/panicstack"
	"github.com/ringloop/ringloop/tasks"
	"github.com/ringloop/ringloop/timers"
)

// taskBatch is how many tasks run between clock reads (Netty's 0x3F mask); it
// is also the least a loop runs per iteration when tasks wait and no I/O ran.
const taskBatch = 64

// loopErrorBackoff throttles a loop whose driver keeps failing: the first
// failure waits the least, each failure in a row doubles it up to the most
// (Netty's handleLoopException always sleeps one second). The loop retries
// the same driver: there is no rebuild (see the package doc, Driver
// failures).
var loopErrorBackoff = struct{ least, most time.Duration }{10 * time.Millisecond, time.Second}

// testClock, set only by tests (export_test.go), replaces the loop's clock so
// that time-budget logic can be checked without reading wall time.
var testClock atomic.Pointer[func() int64]

func now() int64 {
	if c := testClock.Load(); c != nil {
		return (*c)()
	}
	return timers.Now()
}

func gettid() int { return unix.Gettid() }

// run is the loop: wait, dispatch, run tasks, confirm shutdown.
func (l *Loop) run() {
	ended := false
	defer func() {
		if ended {
			return
		}
		if p := recover(); p != nil {
			// The loop's own code panicked (user code is recovered where
			// it runs): stop the loop, one level deeper. A second panic
			// here means the shutdown itself is broken: the process
			// cannot be trusted to clean up, so it goes on panicking.
			if l.fault != nil {
				panic(p)
			}
			l.inWait = false
			l.fail(p)
			l.run()
			return
		}
		l.afterGoexit()
	}()
	onCompletion := l.onCompletion
	for {
		if l.State() >= ShuttingDown {
			l.closeAll()
			if l.confirmShutdown() {
				break
			}
		}
		l.iterate(onCompletion)
	}
	l.terminate()
	ended = true
}

// afterGoexit runs while runtime.Goexit, called by a task or a handler (a
// t.FailNow does it), unwinds the loop goroutine. Goexit cannot be stopped,
// but deferred calls run first, on this goroutine and thread, so the loop
// goes on from here (one level deeper per Goexit) and the goroutine ends with
// the loop. A Goexit inside the driver's Wait (from a handler) abandons the
// rest of that completion batch, which cannot be resumed: rather than run on
// with completions lost, the loop shuts down with no quiet period (closing
// every registration) and then refuses work with ErrShutdown.
func (l *Loop) afterGoexit() {
	l.leave() // the piece it was in ended with the Goexit
	l.stats.panics.Add(1)
	if l.inWait {
		l.inWait = false
		l.cfg.logger.Error("ringloop: a handler called runtime.Goexit; the loop cannot resume its completion batch and shuts down",
			slog.String("loop", l.Name()), slog.Any("stack", panicstack.Frames()))
		l.ShutdownGracefully(0, DefaultShutdownTimeout)
	} else {
		l.cfg.logger.Error("ringloop: a task called runtime.Goexit; the loop goes on",
			slog.String("loop", l.Name()), slog.Any("stack", panicstack.Frames()))
	}
	l.run()
}

// hasTasks reports work the loop must not sleep on: queued tasks, tail tasks,
// or due timers already moved out of the heap.
func (l *Loop) hasTasks() bool {
	return l.dueHead < len(l.due) || len(l.redeliverList) > 0 || l.taskQ.Len() > 0 || l.tailQ.Len() > 0 || l.ctlQ.Len() > 0
}

// iterate runs one iteration of the loop: wait for I/O, then run what it
// and the rings brought. A driver that can go on waiting (driver.Resumer, a
// parked loop's) runs the iterations that follow a blocking wait inside it,
// through between, until one would not block.
func (l *Loop) iterate(onCompletion func(*driver.Completion)) {
	l.beforeWait()
	l.inWait = true
	var err error
	if l.resumer != nil && l.it.blocking {
		_, err = l.resumer.WaitResume(l.it.timeout, onCompletion, l.betweenFn)
	} else {
		_, err = l.drv.Wait(l.it.timeout, onCompletion)
	}
	l.inWait = false
	l.afterWait(err)
}

// between ends the iteration whose completions the driver has just handed
// out and begins the next, for a driver that goes on waiting: it asks to
// block with the next iteration's timeout, or returns false for the loop to
// run it (tasks wait, a spin, a shutdown to handle).
func (l *Loop) between() (time.Duration, bool) {
	l.inWait = false
	l.afterWait(nil)
	if l.State() >= ShuttingDown {
		// The iterate that returns ran no wait of its own.
		l.it = iteration{deadline: wakeNone}
		l.ioFirst, l.completions = 0, 0
		return 0, false
	}
	l.beforeWait()
	if !l.it.blocking {
		return 0, false
	}
	l.inWait = true
	return l.it.timeout, true
}

// iteration is what an iteration decided before its wait.
type iteration struct {
	timeout  time.Duration
	blocking bool  // the wait may sleep
	deadline int64 // the wake deadline published, wakeNone if none
	spinning bool
}

// beforeWait decides how long the iteration's wait may sleep and publishes
// the wake deadline (see nextWake).
func (l *Loop) beforeWait() {
	l.stats.iterations.Add(1)
	if h := l.cfg.testFault; h != nil {
		h("iteration")
	}
	it := iteration{timeout: driver.NoWait, deadline: wakeNone}
	idle := !l.hasTasks() && !l.busyPolling()
	// The clock is read only when the loop has a spin window to check.
	it.spinning = idle && l.spin.window > 0 && l.spin.poll(now()-l.lastActive)
	if it.spinning {
		l.stats.spins.Add(1)
	}
	if idle && !it.spinning {
		if d, ok := l.heap.NextDeadline(); ok {
			it.deadline = d
		}
		shutting := l.State() >= ShuttingDown
		if shutting {
			// While shutting down, wake at least every poll interval to
			// re-check the quiet period and the timeout.
			sp := l.shutdownPoll
			if sp == 0 {
				sp = now() + int64(shutdownPollInterval)
			}
			it.deadline = min(it.deadline, sp)
		}
		// Publish the wake deadline, then look again: a producer that
		// enqueued (or a ShutdownGracefully that raised the state) before
		// the store is seen here, and found the loop awake, so it did not
		// wake the driver; one that comes after it sees the deadline and
		// wakes the driver. A shutdown raised since the state was read
		// above must not wait for a deadline computed without it (a timer
		// an hour away).
		l.nextWake.Store(it.deadline)
		if !l.hasTasks() && (shutting || l.State() < ShuttingDown) {
			switch {
			case it.deadline == wakeNone:
				it.timeout, it.blocking = driver.WaitForever, true
			default:
				if d := it.deadline - now(); d > 0 {
					it.timeout, it.blocking = time.Duration(d), true
				}
			}
		}
	}
	l.it = it
	l.ioFirst, l.completions = 0, 0
}

// afterWait runs what the wait and the rings brought: tasks, timers,
// flushes.
func (l *Loop) afterWait(err error) {
	it := l.it
	woken := l.nextWake.Swap(awake) == awake
	end := now()
	l.stats.waits.Add(1)
	if err != nil {
		l.loopError(err)
	} else if l.waitFails > 0 {
		l.cfg.logger.Warn("ringloop: driver recovered", slog.String("loop", l.String()), slog.Int("failed waits", l.waitFails))
		l.waitFails = 0
	}

	var ioTime int64
	if l.completions > 0 {
		ioTime = end - l.ioFirst
		l.stats.completions.Add(uint64(l.completions))
		l.stats.ioNanos.Add(uint64(ioTime))
		l.checkBatch(ioTime)
	}

	ratio := int64(l.ioRatio.Load())
	budget := int64(-1)
	if ratio < 100 {
		budget = ioTime * (100 - ratio) / ratio
	}
	ran := l.runTasks(end, budget)
	if l.completions > 0 || ran > 0 {
		if l.spin.limit > 0 {
			l.spin.worked(end-l.lastActive, it.spinning, l.completions+ran)
		}
		l.lastActive = end
	}
	l.redeliverKept()
	l.flushConns()
	l.publishGauges()

	// Count premature empty returns (Metrics.EmptyWakeups): a blocking wait
	// that returned early with nothing to do and nobody waking it. The
	// drivers keep waiting through their own completions, stale readiness
	// and EINTR, so only a producer's wake that lands after the loop woke
	// for another reason gets here; the count is for diagnosis (Netty
	// rebuilds its selector on a run of them, a JDK epoll bug).
	switch {
	case l.completions > 0 || ran > 0 || woken || !it.blocking:
	case it.deadline != wakeNone && end >= it.deadline: // a normal timeout
	default:
		l.stats.emptyWakes.Add(1)
	}
}

// busyPolling reports whether the loop should poll without blocking because
// it saw work less than the busy-poll window ago (WithBusyPoll).
func (l *Loop) busyPolling() bool {
	bp := l.cfg.busyPoll
	return bp > 0 && now()-l.lastActive < int64(bp)
}

// onCompletion routes one completion to its registration; stale tags (a slot
// reused since the op was armed) are dropped. User callbacks are recovered
// where they run (callbacks.go); a panic that reaches here is the engine's
// own and stops the loop (fail), while the driver goes on with its batch.
func (l *Loop) onCompletion(c *driver.Completion) {
	defer l.recoverFault()
	if l.completions == 0 {
		l.ioFirst = now()
	}
	l.completions++
	if h := l.cfg.testFault; h != nil {
		h("completion")
	}
	// Hand-off hook (handoff.go): an fd another loop sent with MSG_RING has
	// no registration here.
	if _, _, k := splitTag(c.Tag); k == opHandoff {
		l.receiveHandoff(c)
		return
	}
	r, k := l.reg.lookup(c.Tag)
	if r == nil {
		l.stats.stale.Add(1)
		return
	}
	if l.cfg.stallThreshold > 0 {
		l.enter(pieceCallback)
		r.complete(k, c)
		l.leave()
		return
	}
	r.complete(k, c)
}

// ErrLoopPanicked: the loop's own code panicked, a bug in ringloop rather
// than in a handler or a task. The loop stops: its connections are closed
// with an error wrapping it (and a *tasks.PanicError with the value and the
// stack), Shutdown and Close return the same error, and it is logged once.
var ErrLoopPanicked = errors.New("engine: the loop's own code panicked; the loop stopped")

// recoverFault is deferred around the engine's own code that runs inside
// the driver's Wait: a panic there stops the loop (fail).
func (l *Loop) recoverFault() {
	if p := recover(); p != nil {
		l.engineFault(p)
	}
}

// engineFault stops the loop for a panic of its own code, once.
func (l *Loop) engineFault(p any) {
	if l.fault != nil {
		l.stats.panics.Add(1) // already stopping: logged once
		return
	}
	l.fail(p)
}

// engineTask marks the tasks that are the engine's own code (the user
// callbacks they call are recovered where they run): a panic in one stops
// the loop, as in the engine's code anywhere else.
type engineTask interface{ engineTask() }

func (*handoff) engineTask()        {}
func (*idleTask) engineTask()       {}
func (*asyncDrain) engineTask()     {}
func (*connectTimeout) engineTask() {}

// fail records the loop's own panic and starts a shutdown with no quiet
// period (on the loop): the state it left half updated is not run on, only
// torn down.
func (l *Loop) fail(p any) {
	l.leave() // the piece it was in ended with the panic
	l.stats.panics.Add(1)
	l.fault = fmt.Errorf("%w: %w", ErrLoopPanicked, tasks.NewPanicError(p))
	l.cfg.logger.LogAttrs(context.Background(), slog.LevelError, "ringloop: internal error: the loop's own code panicked; the loop stops and closes its connections",
		append([]slog.Attr{slog.String("loop", l.Name())}, panicstack.Attrs(p)...)...)
	l.quietNanos.Store(0)
	l.raiseState(ShuttingDown)
}

// closeCause is why the loop closes what it still serves: ErrShutdown, or
// the fault that stopped it.
func (l *Loop) closeCause() error {
	if l.fault != nil {
		return l.fault
	}
	return ErrShutdown
}

// runTasks drains the control ring, runs due timers and queued tasks for up
// to budget nanoseconds (negative: no limit; the clock is read every 64
// tasks, so at least 64 run), then drains the tail and control rings without
// a limit. It returns how many ran. The control ring is drained first too,
// so that a flood of user tasks cannot hold the library's own work back.
func (l *Loop) runTasks(start, budget int64) int {
	ran := l.runControl()
	l.fetchDue(start)
	deadline := start + budget
	for {
		t, kind := l.pollTask()
		if t == nil {
			break
		}
		l.safeRun(t, kind)
		ran++
		if budget >= 0 && ran%taskBatch == 0 {
			if now() >= deadline {
				break
			}
		}
	}
	for t := l.tailQ.Poll(); t != nil; t = l.tailQ.Poll() {
		l.safeRun(t, pieceTail)
		ran++
	}
	ran += l.runControl()
	if ran > 0 {
		end := now()
		l.lastExec = end
		l.stats.tasks.Add(uint64(ran))
		l.stats.taskNanos.Add(uint64(end - start))
	}
	return ran
}

// runControl drains the control ring and returns how many tasks ran.
func (l *Loop) runControl() int {
	ran := 0
	for t := l.ctlQ.Poll(); t != nil; t = l.ctlQ.Poll() {
		l.safeRun(t, pieceControl)
		ran++
	}
	return ran
}

// runAllTasks runs every due timer and queued task with no budget, until the
// rings are empty; used while shutting down.
func (l *Loop) runAllTasks() bool {
	any := false
	for l.runTasks(now(), -1) > 0 {
		any = true
	}
	return any
}

// fetchDue moves the timers due at now into the task run (Netty's
// fetchFromScheduledTaskQueue), in deadline order, ahead of queued tasks.
func (l *Loop) fetchDue(at int64) {
	if l.dueHead == len(l.due) {
		clear(l.due)
		l.due, l.dueHead = l.due[:0], 0
	}
	l.heap.PollDue(at, l.appendDue)
}

func (l *Loop) appendDueTask(t tasks.Task) { l.due = append(l.due, t) }

// pollTask takes the next due timer, else the next queued task, and says
// which (for the stall detector).
func (l *Loop) pollTask() (tasks.Task, uint64) {
	if l.dueHead < len(l.due) {
		t := l.due[l.dueHead]
		l.due[l.dueHead] = nil
		l.dueHead++
		return t, pieceTimer
	}
	return l.taskQ.Poll(), pieceTask
}

// safeRun runs one task, recovering and reporting a panic (Netty's
// safeExecute); an engine task's panic stops the loop instead. With the
// stall detector on it publishes the piece of work it runs (kind) for the
// watchdog (watchdog.go).
func (l *Loop) safeRun(t tasks.Task, kind uint64) {
	watched := l.cfg.stallThreshold > 0
	if watched {
		l.enter(kind)
	}
	defer func() {
		if watched {
			l.leave()
		}
		if p := recover(); p != nil {
			if _, ok := t.(engineTask); ok {
				l.engineFault(p)
				return
			}
			l.reportPanic("task", p)
		}
	}()
	if h := l.cfg.testFault; h != nil {
		if _, ok := t.(engineTask); ok {
			h("engine task")
		}
	}
	t.Run()
}

// reportPanic logs a recovered panic with the loop's name, where it
// happened and its stack as a list of frames (see package panicstack for
// why not one multi-line string). It runs in the deferred function that
// recovered p.
func (l *Loop) reportPanic(what string, p any) {
	l.stats.panics.Add(1)
	l.cfg.logger.LogAttrs(context.Background(), slog.LevelError, "ringloop: "+what+" panicked; the loop goes on",
		append([]slog.Attr{slog.String("loop", l.Name())}, panicstack.Attrs(p)...)...)
}

// loopError handles a failing Wait: count it, back off, retry. The log says
// so at the 1st, 2nd, 4th, 8th... failure in a row, so a driver that keeps
// failing is reported clearly without flooding the log.
func (l *Loop) loopError(err error) {
	l.waitFails++
	n := l.waitFails
	l.stats.waitErrors.Add(1)
	if n&(n-1) == 0 {
		msg := "ringloop: driver wait failed; retrying after a back-off"
		if n > 1 {
			msg = "ringloop: driver keeps failing; retrying after a back-off"
		}
		l.cfg.logger.Error(msg, slog.String("loop", l.String()), slog.Int("failures in a row", n), slog.Any("err", err))
	}
	d := loopErrorBackoff.most
	if n < 32 {
		d = min(d, loopErrorBackoff.least<<(n-1))
	}
	time.Sleep(d)
}
