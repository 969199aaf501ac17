package engine

import (
	"fmt"
	"log/slog"
	"reflect"
	"runtime"
	"time"

	"github.com/ringloop/ringloop/tasks"
)

// DefaultStallThreshold is how long one piece of the loop's work (a task, a
// timer, a handler callback, a batch of completions) may run before the stall
// detector reports it. It is on by default because a blocked loop is the
// failure an event-loop service is most likely to meet and least likely to
// see: every connection of the loop waits, and nothing else says so.
//
// Why 250 ms. The threshold must stay above anything a healthy loop does,
// measured on a wall clock that also counts the time the loop's thread was
// not running: a loop's longest piece of work under full load is one
// completion batch, and on the 2-core development machine the longest one
// measured (echo and HTTP at 256 connections, under -race, with the
// clients in the same process and the machine loaded by other suites) stayed
// under 60 ms (see TestStallDefaultQuietUnderLoad). Go's scheduler
// preempts a goroutine after 10 ms, so a loop that waits for a CPU loses
// time in slices of that order, not hundreds of milliseconds. Below it must
// catch what users actually do wrong on a loop: a database call, a
// time.Sleep, a synchronous HTTP request, which take from tens of
// milliseconds to seconds; 250 ms is already a quarter of a second every
// client of the loop waited. WithStallDetector changes it (0 turns it off).
const DefaultStallThreshold = 250 * time.Millisecond

// StallReport describes a piece of the loop's work that ran longer than the
// stall threshold. The loop waited for it: nothing else of the loop ran
// meanwhile.
type StallReport struct {
	Loop *Loop
	// What ran: "task" (Execute, Submit), "timer" (Schedule...), "tail task"
	// (ExecuteAfterIteration), "control task" (the library's own), "callback"
	// (one handler callback: one completion), or "completions" (a batch of
	// completions, none of which alone ran past the threshold).
	What string
	// Detail names it: a task's function (or type), a callback's operation
	// and handler type, a batch's completion count.
	Detail string
	// Took is how long it ran (wall clock: it includes time the loop's
	// thread was descheduled).
	Took time.Duration
}

// String formats the report as the default log line says it.
func (r StallReport) String() string {
	return fmt.Sprintf("stall on %s: %s (%s) took %v", r.Loop.Name(), r.What, r.Detail, r.Took)
}

// noteLongest records d as the longest piece of work if it is.
func (l *Loop) noteLongest(d int64) {
	if uint64(d) > l.stats.longest.Load() {
		l.stats.longest.Store(uint64(d))
	}
}

// stalled reports a piece of work over the threshold, through the user's
// function or the logger. It runs on the loop, rarely: the detail is built
// only here.
func (l *Loop) stalled(what string, detail func() string, d int64) {
	r := StallReport{Loop: l, What: what, Detail: detail(), Took: time.Duration(d)}
	if l.cfg.onStall != nil {
		l.onStall(r)
		return
	}
	l.cfg.logger.Warn("ringloop: stall: the loop was blocked; every connection of the loop waited",
		slog.String("loop", l.Name()), slog.String("what", r.What), slog.String("detail", r.Detail),
		slog.Duration("took", r.Took), slog.Duration("threshold", l.cfg.stallThreshold))
}

// onStall calls the stall detector's function, a user hook.
func (l *Loop) onStall(r StallReport) {
	defer l.recoverHook("stall detector")
	l.cfg.onStall(r)
}

// checkTask times a task that ended at end (one clock read per task: the end
// of one is the start of the next, see runTasks).
func (l *Loop) checkTask(what string, t tasks.Task, end int64) {
	d := end - l.workMark
	l.workMark = end
	l.noteLongest(d)
	if th := int64(l.cfg.stallThreshold); d > th {
		l.stalled(what, func() string { return taskName(t) }, d)
	}
}

// checkCompletion times the completion just handled (one clock read each,
// with the detector on) and reports one callback over the threshold.
func (l *Loop) checkCompletion(r registration, k opKind) {
	end := now()
	d := end - l.workMark
	l.workMark = end
	if d > int64(l.cfg.stallThreshold) {
		l.batchReported = true
		l.stalled("callback", func() string { return completionName(r, k) }, d)
	}
}

// checkBatch times a whole completion batch: reported when it ran past the
// threshold with no single callback that did.
func (l *Loop) checkBatch(n int, d int64) {
	l.noteLongest(d)
	reported := l.batchReported
	l.batchReported = false
	if th := l.cfg.stallThreshold; th > 0 && d > int64(th) && !reported {
		l.stalled("completions", func() string { return fmt.Sprintf("%d completions", n) }, d)
	}
}

// taskName names a task: a function's name, else the task's type.
func taskName(t tasks.Task) string {
	if w, ok := t.(interface{ Task() tasks.Task }); ok && w.Task() != nil {
		t = w.Task() // a timer: what it runs
	}
	var fn any = t
	if f, ok := t.(tasks.Func); ok {
		fn = (func())(f)
	}
	if v := reflect.ValueOf(fn); v.Kind() == reflect.Func {
		if f := runtime.FuncForPC(v.Pointer()); f != nil {
			return f.Name()
		}
	}
	return fmt.Sprintf("%T", t)
}

// completionName names a completion's operation and who handled it.
func completionName(r registration, k opKind) string {
	switch x := r.(type) {
	case *Conn:
		return fmt.Sprintf("%s on a connection, handler %T", k, x.h)
	case *Listener:
		return fmt.Sprintf("%s on listener %v, handler %T", k, x.addr, x.h)
	case *Watch:
		return fmt.Sprintf("fd watch, handler %T", x.h)
	}
	return fmt.Sprintf("%s, %T", k, r)
}

// String names an operation kind for stall reports.
func (k opKind) String() string {
	switch k {
	case opPoll:
		return "poll"
	case opRecv:
		return "receive"
	case opSend:
		return "send"
	case opAccept:
		return "accept"
	case opConnect:
		return "connect"
	case opClose:
		return "close"
	case opHandoff:
		return "hand-off"
	}
	return fmt.Sprintf("op %d", uint8(k))
}
