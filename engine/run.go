package engine

import (
	"log/slog"
	"time"

	"github.com/ringloop/ringloop/internal/driver"
)

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
// it saw work less than the busy-poll window ago (WithSpin with busy).
func (l *Loop) busyPolling() bool {
	bp := l.cfg.busyPoll
	return bp > 0 && now()-l.lastActive < int64(bp)
}
