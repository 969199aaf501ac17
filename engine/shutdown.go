package engine

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/ringloop/ringloop/tasks"
)

// shutdownPollInterval bounds each wait while the quiet period runs (Netty
// sleeps 100 ms; the loop waits on its driver instead, so tasks and I/O still
// wake it at once).
const shutdownPollInterval = 100 * time.Millisecond

// Shutdown shuts the loop down and waits until it has terminated or ctx is
// done (Go's http.Server.Shutdown idiom). It starts the shutdown with no
// quiet period: the loop runs what is queued and its shutdown hooks, closes
// its listeners and connections (after a ShutdownHandler's OnShutdown; each
// close's flush bounded as the package doc's Lifecycle says) and terminates, so ctx bounds only the wait, not the shutdown. It returns
// nil once the loop has terminated (an error matching ErrLoopPanicked if
// the loop's own code stopped it), ctx.Err() if ctx ended first (the
// shutdown goes on; Done tells when it ends), and tasks.ErrDeadlock at once when
// called on the loop itself, which cannot wait for itself (the shutdown is
// started all the same). After ShutdownGracefully it only waits: the quiet
// period stays.
func (l *Loop) Shutdown(ctx context.Context) error {
	l.startShutdown(0, defaultShutdownTimeout)
	if l.InEventLoop() {
		return tasks.ErrDeadlock
	}
	select {
	case <-l.done: // first: a terminated loop reports so whatever ctx says
		return l.fault // written before done was closed
	default:
	}
	select {
	case <-l.done:
		return l.fault
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Close is Shutdown with no deadline (io.Closer).
func (l *Loop) Close() error { return l.Shutdown(context.Background()) }

// Done returns a channel closed once the loop has terminated: its
// connections closed and its driver released (context.Context's idiom).
func (l *Loop) Done() <-chan struct{} { return l.done }

// ShutdownGracefully starts Netty's graceful shutdown and returns without
// waiting (wait with Shutdown or Done). It is the one Netty name kept,
// because the quiet period adds meaning Shutdown lacks: tasks keep running,
// and the loop ends once no task or shutdown hook ran for the quiet period,
// or once timeout has passed since the call. Scheduled tasks are cancelled,
// registrations closed, shutdown hooks run; after that Execute returns
// ErrShutdown. Invalid arguments (quiet < 0, timeout < quiet) return an
// error and change nothing; a second call changes nothing either. It may
// be called on the loop itself.
func (l *Loop) ShutdownGracefully(quiet, timeout time.Duration) error {
	if quiet < 0 {
		return fmt.Errorf("engine: quiet period %v (expected >= 0)", quiet)
	}
	if timeout < quiet {
		return fmt.Errorf("engine: timeout %v (expected >= quiet period %v)", timeout, quiet)
	}
	l.startShutdown(quiet, timeout)
	return nil
}

// startShutdown is ShutdownGracefully with valid arguments.
func (l *Loop) startShutdown(quiet, timeout time.Duration) {
	if l.State() >= ShuttingDown {
		return
	}
	l.quietNanos.Store(int64(quiet))
	l.timeoutNanos.Store(int64(timeout))
	old := l.raiseState(ShuttingDown)
	switch old {
	case NotStarted:
		// Start the goroutine so it runs the shutdown path (and releases
		// the driver); if it cannot start, terminate right here.
		if err := l.startForShutdown(); err != nil {
			l.cfg.logger.Warn("ringloop: loop could not start to shut down", slog.Any("err", err))
			l.terminate()
		}
	case Started:
		l.forceWake()
	}
}

// confirmShutdown is Netty's: run what is queued and the hooks; end at once
// if the quiet period is zero or the loop is Shutdown; else end when the
// timeout passed (even if work keeps coming) or a whole quiet period went by
// without work. Both count from the moment the loop saw the shutdown, so a
// task that ran before the call does not shorten the quiet period (in Netty
// the wake-up task that shutdownGracefully queues has that effect).
func (l *Loop) confirmShutdown() bool {
	if !l.shutdownBegun {
		l.shutdownBegun = true
		l.shutdownStart = now()
	}
	l.heap.CancelAll()
	l.shutdownPoll = 0
	worked := l.runAllTasks() || l.runShutdownHooks()
	if l.State() >= Shutdown || worked && l.quietNanos.Load() == 0 {
		return true
	}
	t := now()
	timeoutAt := l.shutdownStart + l.timeoutNanos.Load()
	if t >= timeoutAt {
		return true
	}
	quietEnd := max(l.lastExec, l.shutdownStart) + l.quietNanos.Load()
	if worked || t < quietEnd {
		l.shutdownPoll = min(quietEnd, timeoutAt, t+int64(shutdownPollInterval))
		return false
	}
	return true
}
