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
// Measured 2026-11-22 on a shared 2-core AMD EPYC VM (GOMAXPROCS=2, other
// builds running; load average about 2), Go 1.26, medians of 6 runs of
//
//	go test -run '^$' -bench . -benchmem -count 6 ./tasks
//
// BenchmarkMPSC: P producers offer pre-built tasks, one consumer polls and
// runs them; both sides park when they cannot proceed, as a channel's do.
// "paced" producers park while more than 1024 tasks are queued (the
// backpressure the 1024-slot ring and channel have built in); "freerun"
// lets the unbounded queue grow to b.N tasks, so it mostly measures the
// garbage collector scanning the backlog.
//
//	benchmark                        ns/op   B/op  allocs/op
//	MPSC/P1/bounded1024               21.1      0      0
//	MPSC/P1/unbounded-paced1024       25.6      0      0
//	MPSC/P1/unbounded-freerun         34.4      9      0
//	MPSC/P1/chan1024 (chan func())    73.0      0      0
//	MPSC/P1/mutex-slice               34.3      0      0
//	MPSC/P4/bounded1024               28.1      0      0
//	MPSC/P4/unbounded-paced1024       27.6      0      0
//	MPSC/P4/unbounded-freerun         45.0     14      0
//	MPSC/P4/chan1024 (chan func())    56.5      0      0
//	MPSC/P4/mutex-slice               37.5      0      0
//	OfferPollSameGoroutine/bounded    12.4      0      0
//	OfferPollSameGoroutine/unbounded  14.3      0      0
//	Promise (+1 listener, Succeed)   138.6    112      1
//
// With 4 producers the queues move tasks about 2.0× as fast as the
// channel, and 3.5× with one; pre-built tasks cost no allocation. On two
// cores a mutex barely contends, so the mutex-guarded slice comes closer
// than it would on more cores. Single runs vary by ±30% on this machine.
package tasks
