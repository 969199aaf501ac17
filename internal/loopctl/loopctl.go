// Package loopctl lets ringloop's own packages (netconn, httpserver,
// loopgroup) hand control work to a loop's control ring: the unbounded,
// per-loop ring that package engine drains every iteration, apart from the
// task ring a user may bound with engine.WithMaxPendingTasks. Closes, read
// and accept resumes, responses of handlers running on other goroutines and
// offload completions go there, so a full task ring can never drop them.
//
// The ring is not public API: a user's tasks must respect the user's bound.
// Package engine cannot be imported from here (it imports this package), so
// engine fills Run in at init, and a loop is passed as the one interface
// *engine.Loop satisfies that callers need: Executor. Any other
// implementation makes Run panic.
package loopctl

import "github.com/ringloop/ringloop/tasks"

// Executor is an *engine.Loop.
type Executor interface {
	InEventLoop() bool
}

// run is set by package engine's init.
var run func(l Executor, t tasks.Task) error

// Register is called once, by package engine's init, with the function that
// queues a task on a loop's control ring.
func Register(f func(l Executor, t tasks.Task) error) { run = f }

// Run queues t on loop l's control ring and wakes the loop. It never fails
// for lack of room: it returns engine.ErrShutdown only once l has shut down,
// and then the caller still owns what t carries (close it, or report it).
// Keep one entry per connection and kind in flight (a pre-built task and a
// flag), so that the ring stays as small as the work it carries.
func Run(l Executor, t tasks.Task) error { return run(l, t) }
