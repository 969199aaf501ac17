// Package taskq holds what an event loop needs to take work from other
// goroutines: lock-free multi-producer single-consumer task rings, the
// tail-task drain, and Submit, which wraps a function into a task that
// completes a future. Package engine is its one user; the types a user
// touches (tasks.Task, tasks.Future, tasks.RejectPolicy, the errors) are in
// package tasks.
//
// # Rings
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
// A tasks.Task is an interface with Run. A pre-built task (a pointer type)
// or a tasks.Func (a func() value) is stored without allocation.
//
// # Tail tasks
//
// The tail ring is a second Queue of the same kind; the engine calls
// DrainAll on it after each iteration's normal tasks, also when no normal
// task ran, with no time budget (Netty's executeAfterEventLoopIteration and
// afterRunningAllTasks). Tasks added during the drain run in the same drain.
//
// # Performance
//
// The rings move pre-built tasks from several producers to one consumer
// with no allocation and, on two cores, two to three times as fast as a
// buffered chan func(); measure with
//
//	go test -run '^$' -bench . -benchmem ./internal/taskq
//
// (dated figures: the micro-benchmarks section of bench/README.md).
package taskq
