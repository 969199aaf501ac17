package engine

import (
	"context"
	"log/slog"
	"time"
)

// defaultStallThreshold is how long one piece of the loop's work (a task, a
// timer, a handler callback, a batch of completions) may run before the stall
// detector reports it. It is on by default because a blocked loop is the
// failure an event-loop service is most likely to meet and least likely to
// see: every connection of the loop waits, and nothing else says so.
//
// Why 250 ms. The threshold must stay above anything a healthy loop does,
// on a wall clock that also counts the time the loop's thread was not
// running: a loaded machine (other suites, -race) stretches a healthy
// piece, but Go's scheduler preempts a goroutine after 10 ms, so a loop
// waiting for a CPU loses time in slices of that order, not in hundreds of
// milliseconds. It must stay below what users do wrong on a loop: a
// database call, a time.Sleep, a synchronous HTTP request, from tens of
// milliseconds to seconds. A quarter of a second, which every client of the
// loop waited, sits between the two with an order of magnitude to spare on
// the healthy side. TestStallDetectorQuietOnHealthyLoop checks that side
// on every backend, profile and mode and logs the longest healthy piece it
// saw (go test -race -run TestStallDetectorQuietOnHealthyLoop -v
// ./engine/). WithStallDetector changes it (0 turns it off).
const defaultStallThreshold = 250 * time.Millisecond

// StallReport describes a loop blocked past the stall threshold by one
// piece of work, reported while it still runs (so a handler that never
// returns is reported too).
type StallReport struct {
	Loop *Loop
	// What blocked the loop: "task" (Execute, Submit), "timer"
	// (Schedule...), "tail task" (ExecuteAfterIteration), "control task"
	// (the library's own), "shutdown hook" or "callback" (a handler
	// callback: OnData, OnOpen, OnClose..., an accept, a watch).
	What string
	// Detail names it: the innermost frame of the loop's goroutine outside
	// Go's runtime and standard library (the user's function that blocks,
	// with its file and line).
	Detail string
	// Stack is the loop goroutine's stack when the stall was seen, one
	// frame per element, innermost first.
	Stack []string
	// Took is how long the loop had been blocked when it was reported
	// (wall clock: it includes time the loop's thread was descheduled); the
	// work may go on longer.
	Took time.Duration
}

// noteLongest records d as the longest piece of work if it is.
func (l *Loop) noteLongest(d int64) {
	if uint64(d) > l.stats.longest.Load() {
		l.stats.longest.Store(uint64(d))
	}
}

// stalled reports a stall through the user's function or the logger, as one
// warning record naming the loop.
func (l *Loop) stalled(what, detail string, stack []string, d int64) {
	r := StallReport{Loop: l, What: what, Detail: detail, Stack: stack, Took: time.Duration(d)}
	if l.cfg.onStall != nil {
		l.onStall(r)
		return
	}
	attrs := []slog.Attr{slog.String("loop", l.Name()), slog.String("what", r.What), slog.String("detail", r.Detail),
		slog.Duration("took", r.Took), slog.Duration("threshold", l.cfg.stallThreshold)}
	attrs = append(attrs, slog.Any("stack", stack))
	l.cfg.logger.LogAttrs(context.Background(), slog.LevelWarn, "ringloop: stall: the loop is blocked; every connection of the loop waits", attrs...)
}

// onStall calls the stall detector's function, a user hook.
func (l *Loop) onStall(r StallReport) {
	defer l.recoverHook("stall detector")
	l.cfg.onStall(r)
}

// checkBatch records a completion batch's time (from the clock reads the
// loop makes anyway) for Metrics.Longest. A slow batch of short callbacks is
// load, not a block: it is not reported.
func (l *Loop) checkBatch(d int64) { l.noteLongest(d) }
