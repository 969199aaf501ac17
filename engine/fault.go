package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/ringloop/ringloop/internal/panicstack"
	"github.com/ringloop/ringloop/internal/taskq"
)

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
	l.fault = fmt.Errorf("%w: %w", ErrLoopPanicked, taskq.NewPanicError(p))
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

// reportPanic logs a recovered panic with the loop's name, where it
// happened and its stack as a list of frames (see package panicstack for
// why not one multi-line string). It runs in the deferred function that
// recovered p.
func (l *Loop) reportPanic(what string, p any) {
	l.stats.panics.Add(1)
	l.cfg.logger.LogAttrs(context.Background(), slog.LevelError, "ringloop: "+what+" panicked; the loop goes on",
		append([]slog.Attr{slog.String("loop", l.Name())}, panicstack.Attrs(p)...)...)
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
		l.ShutdownGracefully(0, defaultShutdownTimeout)
	} else {
		l.cfg.logger.Error("ringloop: a task called runtime.Goexit; the loop goes on",
			slog.String("loop", l.Name()), slog.Any("stack", panicstack.Frames()))
	}
	l.run()
}
