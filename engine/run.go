package engine

import (
	"log/slog"
	"runtime/debug"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/ringloop/ringloop/driver"
	"github.com/ringloop/ringloop/tasks"
	"github.com/ringloop/ringloop/timers"
)

// taskBatch is how many tasks run between clock reads (Netty's 0x3F mask); it
// is also the least a loop runs per iteration when tasks wait and no I/O ran.
const taskBatch = 64

// loopErrorBackoff throttles a loop whose driver keeps failing: the first
// failure waits the least, each failure in a row doubles it up to the most
// (Netty's handleLoopException always sleeps one second).
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
			panic(p) // a fault of the loop itself (user code is recovered)
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
	l.stats.panics.Add(1)
	if l.inWait {
		l.inWait = false
		l.cfg.logger.Error("ringloop: a handler called runtime.Goexit; the loop cannot resume its completion batch and shuts down",
			slog.String("loop", l.String()), slog.String("stack", string(debug.Stack())))
		l.ShutdownGracefully(0, DefaultShutdownTimeout)
	} else {
		l.cfg.logger.Error("ringloop: a task called runtime.Goexit; the loop goes on",
			slog.String("loop", l.String()), slog.String("stack", string(debug.Stack())))
	}
	l.run()
}

// hasTasks reports work the loop must not sleep on: queued tasks, tail tasks,
// or due timers already moved out of the heap.
func (l *Loop) hasTasks() bool {
	return l.dueHead < len(l.due) || l.taskQ.Len() > 0 || l.tailQ.Len() > 0 || l.ctlQ.Len() > 0
}

// iterate runs one iteration of the loop.
func (l *Loop) iterate(onCompletion func(*driver.Completion)) {
	l.stats.iterations.Add(1)
	timeout := driver.NoWait
	blocking := false
	deadline := wakeNone
	idle := !l.hasTasks() && !l.busyPolling()
	// The clock is read only when the loop has a spin window to check.
	spinning := idle && l.spin.window > 0 && l.spin.poll(now()-l.lastActive)
	if spinning {
		l.stats.spins.Add(1)
	}
	if idle && !spinning {
		if d, ok := l.heap.NextDeadline(); ok {
			deadline = d
		}
		if l.State() >= ShuttingDown {
			// While shutting down, wake at least every poll interval to
			// re-check the quiet period and the timeout.
			sp := l.shutdownPoll
			if sp == 0 {
				sp = now() + int64(shutdownPollInterval)
			}
			deadline = min(deadline, sp)
		}
		// Publish the wake deadline, then look again: a producer that
		// enqueued (or a ShutdownGracefully that raised the state) before
		// the store is seen here; one that comes after it sees the deadline
		// and wakes the driver.
		l.nextWake.Store(deadline)
		if !l.hasTasks() && (deadline != wakeNone || l.State() < ShuttingDown) {
			switch {
			case deadline == wakeNone:
				timeout, blocking = driver.WaitForever, true
			default:
				if d := deadline - now(); d > 0 {
					timeout, blocking = time.Duration(d), true
				}
			}
		}
	}
	l.ioFirst, l.completions = 0, 0
	l.inWait = true
	_, err := l.drv.Wait(timeout, onCompletion)
	l.inWait = false
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
		l.checkStall("completions", ioTime)
	}

	ratio := int64(l.ioRatio.Load())
	budget := int64(-1)
	if ratio < 100 {
		budget = ioTime * (100 - ratio) / ratio
	}
	ran := l.runTasks(end, budget)
	if l.completions > 0 || ran > 0 {
		if l.spin.limit > 0 {
			l.spin.worked(end-l.lastActive, spinning)
		}
		l.lastActive = end
	}
	l.flushConns()
	l.publishGauges()

	// Netty's empty-wakeup guard: a blocking wait that returned early with
	// nothing to do and nobody waking it. EINTR never gets here: the
	// drivers retry it.
	switch {
	case l.completions > 0 || ran > 0 || woken || !blocking:
		l.emptyWakes = 0
	case deadline != wakeNone && end >= deadline:
		l.emptyWakes = 0 // a normal timeout
	default:
		l.emptyWakes++
		l.stats.emptyWakes.Add(1)
		if n := l.cfg.rebuildAfter; n > 0 && l.emptyWakes >= n {
			l.cfg.logger.Warn("ringloop: wait returned prematurely too often in a row; rebuilding the driver",
				slog.String("loop", l.String()), slog.Int("times", l.emptyWakes))
			if err := l.rebuildDriver(); err != nil {
				l.cfg.logger.Error("ringloop: driver rebuild failed", slog.Any("err", err))
			}
			l.stats.rebuilds.Add(1)
			l.emptyWakes = 0
		}
	}
}

// rebuild replaces the driver's kernel object, if the driver can.
func (l *Loop) rebuild() error {
	if r, ok := l.drv.(driver.Rebuilder); ok {
		return r.Rebuild()
	}
	return nil
}

// busyPolling reports whether the loop should poll without blocking because
// it saw work less than the busy-poll window ago (WithBusyPoll).
func (l *Loop) busyPolling() bool {
	bp := l.cfg.busyPoll
	return bp > 0 && now()-l.lastActive < int64(bp)
}

// onCompletion routes one completion to its registration; stale tags (a slot
// reused since the op was armed) are dropped.
func (l *Loop) onCompletion(c *driver.Completion) {
	if l.completions == 0 {
		l.ioFirst = now()
	}
	l.completions++
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
	l.dispatch(r, k, c)
}

// dispatch calls a registration, recovering a panic so the loop survives.
func (l *Loop) dispatch(r registration, k opKind, c *driver.Completion) {
	defer func() {
		if p := recover(); p != nil {
			l.reportPanic("completion handler", p)
		}
	}()
	r.complete(k, c)
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
		t := l.pollTask()
		if t == nil {
			break
		}
		l.safeRun(t)
		ran++
		if budget >= 0 && ran%taskBatch == 0 {
			if now() >= deadline {
				break
			}
		}
	}
	for t := l.tailQ.Poll(); t != nil; t = l.tailQ.Poll() {
		l.safeRun(t)
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
		l.safeRun(t)
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

// pollTask takes the next due timer, else the next queued task.
func (l *Loop) pollTask() tasks.Task {
	if l.dueHead < len(l.due) {
		t := l.due[l.dueHead]
		l.due[l.dueHead] = nil
		l.dueHead++
		return t
	}
	return l.taskQ.Poll()
}

// safeRun runs one task, recovering and reporting a panic (Netty's
// safeExecute). With a stall detector it also times the task.
func (l *Loop) safeRun(t tasks.Task) {
	defer func() {
		if p := recover(); p != nil {
			l.reportPanic("task", p)
		}
	}()
	if l.cfg.stallThreshold > 0 {
		s := now()
		t.Run()
		l.checkStall("task", now()-s)
		return
	}
	t.Run()
}

func (l *Loop) reportPanic(what string, p any) {
	l.stats.panics.Add(1)
	l.cfg.logger.Error("ringloop: "+what+" panicked; the loop goes on",
		slog.String("loop", l.String()), slog.Any("panic", p), slog.String("stack", string(debug.Stack())))
}

// checkStall records the longest run and reports one over the threshold.
func (l *Loop) checkStall(what string, d int64) {
	if uint64(d) > l.stats.longest.Load() {
		l.stats.longest.Store(uint64(d))
	}
	if th := l.cfg.stallThreshold; th > 0 && time.Duration(d) > th {
		r := StallReport{Loop: l, What: what, Took: time.Duration(d)}
		if l.cfg.onStall != nil {
			l.cfg.onStall(r)
		} else {
			l.cfg.logger.Warn("ringloop: stall", slog.String("loop", l.String()), slog.String("what", what), slog.Duration("took", r.Took))
		}
	}
}

// StallReport describes a task or completion batch that ran longer than the
// stall threshold.
type StallReport struct {
	Loop *Loop
	What string // "task" or "completions"
	Took time.Duration
}

// loopError handles a failing Wait: count it, rebuild the driver, back off.
// The log says so at the 1st, 2nd, 4th, 8th... failure in a row, so a driver
// that keeps failing is reported clearly without flooding the log.
func (l *Loop) loopError(err error) {
	l.waitFails++
	n := l.waitFails
	l.stats.waitErrors.Add(1)
	report := n&(n-1) == 0
	if report {
		msg := "ringloop: driver wait failed; rebuilding the driver"
		if n > 1 {
			msg = "ringloop: driver keeps failing; rebuilding it after each failure"
		}
		l.cfg.logger.Error(msg, slog.String("loop", l.String()), slog.Int("failures in a row", n), slog.Any("err", err))
	}
	if rerr := l.rebuildDriver(); rerr != nil && report {
		l.cfg.logger.Error("ringloop: driver rebuild failed", slog.String("loop", l.String()), slog.Any("err", rerr))
	}
	l.stats.rebuilds.Add(1)
	d := loopErrorBackoff.most
	if n < 32 {
		d = min(d, loopErrorBackoff.least<<(n-1))
	}
	time.Sleep(d)
}
