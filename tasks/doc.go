// Package tasks holds what an event loop needs to take work from other
// goroutines: lock-free multi-producer single-consumer task queues, the
// tail-task drain, reject policies, and futures and promises.
//
// # Queues
//
// Any goroutine may Offer; only the loop polls. Offer never blocks and never
// takes a lock. NewQueue follows Netty's maxPendingTasks: the default
// (math.MaxInt) is unbounded, as Netty's MpscUnboundedArrayQueue; any other
// limit is clamped to at least 16 and rounded up to a power of two.
//
//   - NewBounded: one preallocated ring of sequence-numbered slots
//     (Vyukov); Offer reports false when full.
//   - NewUnbounded: a linked list of fixed-size chunks. At a chunk boundary
//     any producer links the next chunk, so no producer ever waits for
//     another. Drained chunks are recycled: a queue whose length stays
//     within a chunk or two allocates nothing. See chunked.go for why a
//     producer holding a stale chunk pointer can never write into a
//     recycled chunk (positions are global, and the linking slow path pins
//     the chunk).
//
// Tasks offered by one goroutine are polled in that goroutine's order. Len
// is approximate (a snapshot of two atomic indices, counting tasks claimed
// but not yet published) and safe from any goroutine, unlike Netty's MPSC
// size(), which is valid only on the consumer.
//
// A Task is an interface with Run. A pre-built task (a pointer type) or a
// Func (a func() value) is stored without allocation.
//
// # Tail tasks
//
// The tail queue is a second Queue of the same kind; the engine calls
// DrainAll on it after each iteration's normal tasks, also when no normal
// task ran, with no time budget (Netty's executeAfterEventLoopIteration and
// afterRunningAllTasks). Tasks added during the drain run in the same drain.
//
// # Rejection
//
// When Offer returns false, a RejectPolicy decides: Reject fails at once
// with ErrRejected (Netty's default); Backoff wakes the consumer, sleeps and
// retries, but never on the consumer itself, which would wait for itself.
// Enqueue combines Offer and a policy.
//
// # Futures
//
// Promise[T] implements Future[T] without a goroutine, and without a channel
// unless a caller blocks in Await. Listeners run once, on the promise's
// executor by default; an event loop takes them even with its task queue
// full (ListenerExecutor). When the executor refuses one (shut down) it runs
// on a goroutine of its own, never inline on the goroutine that completed
// the promise, which may be another loop. Await on the promise's own loop
// returns ErrDeadlock.
// PromiseTask and Submit wrap a function into a task that completes a
// promise (Netty's newTaskFor / submit).
//
// # Performance
//
// The rings move pre-built tasks from several producers to one consumer
// with no allocation and, on two cores, two to three times as fast as a
// buffered chan func(); measure with
//
//	go test -run '^$' -bench . -benchmem ./tasks
//
// (dated figures: the micro-benchmarks section of bench/README.md).
package tasks
