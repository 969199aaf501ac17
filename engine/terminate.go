package engine

import (
	"log/slog"
	"runtime"
	"time"
)

// terminate is the end of the loop: refuse new tasks, wait for producers in
// flight, run everything accepted, close registrations, release the driver.
func (l *Loop) terminate() {
	l.raiseState(Shutdown)
	for producersOf(l.ctl.Load()) != 0 {
		runtime.Gosched()
	}
	for l.runAllTasks() || l.runShutdownHooks() {
	}
	l.spin.release()
	l.heap.CancelAll()
	l.closeAll()
	l.drainRegistrations()
	if err := l.drv.Close(); err != nil {
		l.cfg.logger.Warn("ringloop: closing driver", slog.Any("err", err))
	}
	l.publishGauges()
	l.raiseState(Terminated)
	l.unwatch()
	l.tid.Store(0)
	l.g.Store(0)
	close(l.done)
}

// registrationDrainTimeout bounds how long a terminating loop waits for the
// ops of closing registrations to report their end, and is the least it
// gives closing connections to flush.
const registrationDrainTimeout = time.Second

// drainRegistrations pumps the driver until every registration has finished
// closing (so handlers see OnClose and fds are closed through the driver).
// Connections still flushing (what OnShutdown or the handler wrote) get
// until flushDeadline; then they are reset (OnClose: ErrCloseTimeout) and
// the loop waits registrationDrainTimeout more for their ops, after which
// any straggler is abandoned.
func (l *Loop) drainRegistrations() {
	flushEnd := l.flushDeadline(now())
	end := flushEnd + int64(registrationDrainTimeout)
	reset := false
	for l.reg.live > 0 {
		t := now()
		if !reset && t >= flushEnd {
			reset = true
			l.reg.each(func(r registration) {
				if c, ok := r.(*Conn); ok && c.st == connClosing {
					c.abortWith(ErrCloseTimeout)
				}
			})
			continue
		}
		if t >= end {
			break
		}
		wait := end - t
		if !reset {
			wait = flushEnd - t
		}
		l.inWait = true
		_, err := l.drv.Wait(min(time.Duration(wait), 10*time.Millisecond), l.onCompletion)
		l.inWait = false
		if err != nil {
			break
		}
		l.runAllTasks()
		l.flushConns()
	}
	if l.reg.live > 0 {
		l.cfg.logger.Warn("ringloop: registrations did not finish closing; abandoning them", slog.Int("count", l.reg.live))
		l.reg.each(func(r registration) { r.abandon() })
	}
}

// flushDeadline is how long closing connections may go on flushing once the
// loop terminates: each its close timeout (Timeouts.Close), no later than
// the shutdown's timeout counted from when the loop saw the shutdown, and
// at least registrationDrainTimeout.
func (l *Loop) flushDeadline(t int64) int64 {
	least := t + int64(registrationDrainTimeout)
	most := t
	l.reg.each(func(r registration) {
		if c, ok := r.(*Conn); ok && c.st == connClosing {
			most = max(most, t+int64(c.cfg.closeTimeout))
		}
	})
	if l.shutdownBegun {
		most = min(most, l.shutdownStart+l.timeoutNanos.Load())
	}
	return max(least, most)
}

// closeAll closes every registration (Netty's closeAll).
func (l *Loop) closeAll() {
	if l.reg.live == 0 {
		return
	}
	l.reg.each(func(r registration) { r.shutdown() })
}
