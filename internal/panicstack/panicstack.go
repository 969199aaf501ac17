// Package panicstack formats a recovered panic's stack for slog: where it
// happened and the frames below, one string per frame.
//
// Why not the text of debug.Stack as one attribute: a log handler escapes
// its newlines, so the stack reaches the reader as one line of "\n\t"
// (slog's text and JSON handlers both do). Why not write the stack as lines
// of its own: a log record must stay one record, or collectors that split on
// newlines (journald, container log drivers, most shippers) file every frame
// as an unrelated entry, interleaved with other goroutines' lines. So the
// record carries "at", the frame that panicked (the line to open first), and
// "stack", the frames as a list: a JSON handler writes an array, one frame
// per element; a text handler writes them in order on the record's line.
// Frames above the panic (the recover, runtime.gopanic) are dropped.
package panicstack

import (
	"fmt"
	"log/slog"
	"runtime"
	"strings"
)

// maxFrames bounds the frames kept: deeper ones are rarely the cause.
const maxFrames = 48

// Frames returns the calling goroutine's frames from the function that
// panicked down, each "function (file:line)". Called from a deferred
// function that recovered a panic. Without a panic in progress (a
// runtime.Goexit) it returns the frames below its caller.
func Frames() []string {
	pcs := make([]uintptr, 2*maxFrames)
	n := runtime.Callers(2, pcs)
	fs := runtime.CallersFrames(pcs[:n])
	var all []runtime.Frame
	start := 0
	for {
		f, more := fs.Next()
		all = append(all, f)
		switch f.Function {
		case "runtime.gopanic", "runtime.sigpanic", "runtime.goexit1", "runtime.Goexit":
			start = len(all) // the panic is below: what is above is the recovery
		}
		if !more {
			break
		}
	}
	for start < len(all) && strings.HasPrefix(all[start].Function, "runtime.") && !strings.HasPrefix(all[start].Function, "runtime.main") {
		start++ // runtime.panicmem, runtime.panicIndex...: the runtime's, not the user's
	}
	if start == len(all) {
		start = 0
	}
	all = all[start:]
	if len(all) > maxFrames {
		all = all[:maxFrames]
	}
	out := make([]string, len(all))
	for i, f := range all {
		out[i] = fmt.Sprintf("%s (%s:%d)", f.Function, f.File, f.Line)
	}
	return out
}

// Attrs returns the attributes a recovered panic p is logged with: "panic"
// (its value), "at" (the frame that panicked) and "stack" (Frames). Call it
// from the deferred function that recovered p.
func Attrs(p any) []slog.Attr {
	frames := Frames()
	at := ""
	if len(frames) > 0 {
		at = frames[0]
	}
	return []slog.Attr{slog.Any("panic", p), slog.String("at", at), slog.Any("stack", frames)}
}
