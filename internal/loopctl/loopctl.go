// Package loopctl lets ringloop's own packages (netconn, httpserver,
// loopgroup, looptls, tasks, packet) hand control work to a loop's control ring: the unbounded,
// per-loop ring that package engine drains every iteration, apart from the
// task ring a user may bound with engine.WithMaxPendingTasks. Closes, read
// and accept resumes, responses of handlers running on other goroutines,
// offload completions and a promise's listeners go there, so a full task
// ring can never drop them.
//
// # Why a typed door, and not a hidden one
//
// The ring is not for users: a user's tasks must respect the user's bound.
// Package engine owns the ring and imports this package, so this package
// cannot import engine, and engine cannot hand it an unexported function
// without registering one at init, a global that every loop shares and that
// hides who calls whom. Instead engine exports one method, Loop.Control,
// whose only parameter is this package's Task. Task has unexported fields
// and this package is internal, so no program outside the module can make
// one: the method is in engine's public surface, documented, but the only
// Task a user can come by is the zero one (Go's type inference can conjure
// a zero value of a type it cannot name), which Control refuses. Run, here,
// is how ringloop's packages call it; *engine.Loop satisfies Loop.
//
// The cost is one exported method on engine.Loop and one indirect call per
// control task; a Task is a value holding the task, so a pre-built task
// still queues without allocating.
//
// # Asking, through the same door
//
// A package that runs sockets of its own on a loop (package packet) needs
// more of it than a ring: its driver, its slot table, its counters. Ask
// sends a request through Control that the loop answers at once, with its
// internal/loopapi.Internals, rather than queueing; being a Task, the
// request too can be made only inside the module, so engine exports no
// name for it. This package keeps the answer a bare value: package tasks
// imports it and must not import the driver contract (loopapi.Open does).
package loopctl

// Task is a task bound for a loop's control ring. Only Run makes a non-zero
// one. What it carries is a tasks.Task, spelt out as interface{ Run() }:
// package tasks imports this package (a promise's listeners ride on a
// loop's control ring), so this one cannot import tasks.
type Task struct{ t interface{ Run() } }

// Unwrap returns the task to queue, nil for the zero Task (package engine's
// side of the door).
func (c Task) Unwrap() interface{ Run() } { return c.t }

// Loop is what Run needs of a loop: an *engine.Loop.
type Loop interface {
	Control(Task) error
}

// Run queues t on loop l's control ring and wakes the loop. It never fails
// for lack of room: it returns engine.ErrShutdown only once l has shut down,
// and then the caller still owns what t carries (close it, or report it).
// Keep one entry per connection and kind in flight (a pre-built task and a
// flag), so that the ring stays as small as the work it carries.
func Run(l Loop, t interface{ Run() }) error { return l.Control(Task{t}) }
