// Package tasks holds the types a user of ringloop's event loops touches
// when handing them work: Task (and Func, its adapter for a plain
// function), futures and promises, reject policies for a bounded task ring,
// and the errors of all these.
//
// Submitting work is a loop's business (engine.Loops: Execute, Schedule...;
// engine.Submit for a result); the task rings themselves are internal.
//
// # Futures
//
// Promise[T] implements Future[T] without a goroutine, and without a channel
// unless a caller blocks in Await. Listeners run once, on the promise's
// executor by default; an event loop takes them even with its task ring
// full (they go on its control ring, apart from the bound a user sets). When
// the executor refuses one (shut down) it runs on a goroutine of its own,
// never inline on the goroutine that completed the promise, which may be
// another loop. Await on the promise's own loop returns ErrDeadlock.
//
// # Rejection
//
// When a bounded task ring is full (engine.WithMaxPendingTasks), a
// RejectPolicy decides: Reject fails at once with ErrRejected (Netty's
// default); Backoff wakes the loop, sleeps and retries, but never on the loop
// itself, which would wait for itself.
package tasks
