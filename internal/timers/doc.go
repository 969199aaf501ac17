// Package timers is the timer structure of an event loop: what runs behind
// Loop.Schedule, ScheduleAtFixedRate and ScheduleWithFixedDelay, the
// per-connection read, write and idle deadlines, and the loop's wait timeout.
// One Heap per loop, touched only by the loop.
//
// # Design: a hashed wheel in front of an exact heap
//
// Netty keeps scheduled tasks in a binary heap ordered by (deadline,
// sequence), each task storing its index so that cancel is O(log n). A network
// server's timer load is different: millions of idle and read timeouts,
// nearly all cancelled or pushed back before they fire. Here:
//
//   - Every timer due after the current tick (2^20 ns, about 1 ms) sits in a
//     hierarchical hashed wheel: 8 levels of 64 slots, the level chosen by the
//     highest bit in which the timer's tick differs from the wheel cursor.
//     Slots are intrusive doubly linked lists, so arming and stopping are
//     O(1) and touch no memory beyond the neighbours; a 64-bit mask per level
//     finds the earliest non-empty slot in two instructions.
//   - Timers of the current tick (and any armed before the cursor) sit in an
//     exact binary heap ordered by (deadline, sequence), with stored indexes.
//     It holds only what is about to fire, so its O(log k) works on a small k
//     and gives the exact order and the exact next deadline.
//   - As the clock advances, the slot the cursor enters is emptied into lower
//     levels or the exact heap. A timer moves at most once per level, and
//     only if it lives long enough: timers stopped first cost O(1) in all.
//   - Re-arming a pending timer for a later deadline (an idle timeout reset on
//     every read) rewrites its deadline in place, leaving it in the earlier
//     slot: a timer never sits in a slot that starts after its deadline, and
//     is filed again when the cursor reaches that slot. A reset thus costs two
//     stores; a connection's idle timer moves about once per timeout period,
//     however often it is reset.
//
// Why not the wheel-for-near, heap-for-far split: idle timeouts (tens of
// seconds) are the far timers, and they are the bulk of the churn; a heap for
// them keeps Netty's O(log n) cache-missing sifts exactly where the volume is.
// The measurements below compare both ends.
//
// NextDeadline is exact: when the exact heap is empty it empties the earliest
// non-empty slots into it, which may move the cursor ahead of the clock (up to
// the earliest pending deadline). Until the clock catches up, timers armed for
// before that earliest deadline go to the exact heap (O(log k), Netty's cost)
// instead of the wheel; they are by construction the earliest timers.
//
// # Semantics
//
//   - Deadlines are monotonic nanoseconds from a fixed process origin (Now).
//     DeadlineAfter saturates at Never instead of overflowing; a zero or
//     negative delay is due at once.
//   - A timer never fires early. PollDue(now) hands out every timer with
//     deadline <= now in (deadline, sequence) order; equal deadlines fire in
//     scheduling order, and re-arming counts as scheduling anew. Timers armed
//     during a PollDue call wait for the next call, so a task re-arming itself
//     for "now" (or a fixed-rate task catching up) cannot starve the loop.
//   - Fixed rate: next deadline = previous deadline + period, so after a stall
//     the task runs once per PollDue until caught up (Netty). Fixed delay:
//     next deadline = end of the run + delay.
//   - A task that panics stops repeating, its future fails with a
//     *tasks.PanicError, and the panic is re-raised with its original value
//     for the loop's own recovery to report.
//   - Stop and Cancel remove the entry at once and release it: no tombstones,
//     the exact heap's array shrinks after bursts.
//   - CancelAll (shutdown) cancels every Scheduled and stops every Timer.
//
// # Threads
//
// A Heap, its Timers and Start/Stop/PollDue/NextDeadline belong to the loop.
// Two things may happen elsewhere:
//
//   - Scheduled.Cancel from any goroutine marks the task cancelled atomically
//     (IsCancelled and the future are right at once) and then removes the
//     entry on the loop: directly if the caller is on it (owner.InEventLoop),
//     else through owner.Execute. If the owner refuses (shut down), the entry
//     stays until PollDue or NextDeadline meets it (cancelled entries are
//     dropped there, never handed out) or CancelAll.
//   - Scheduling from a foreign goroutine is split: NewScheduled creates the
//     task and its future anywhere (deadline measured at once), AddTask is the
//     task that inserts it, to run on the loop.
//
// The engine's foreign-goroutine Schedule is thus:
//
//	s := timers.NewScheduled(h, task, delay, period, kind)
//	if err := owner.Execute(s.AddTask()); err != nil {
//		s.Fail(err)
//	}
//
// No mutex is taken on any path; Scheduled uses one atomic state word.
//
// # Memory
//
// A Timer is 56 bytes (embedded in the connection; nothing else is allocated
// while it waits in the wheel) plus one pointer in the exact heap during its
// last tick. A Scheduled is one 208-byte allocation including its future.
//
// # Measurements
//
// A Timer's schedule, cancel and reset cost tens of nanoseconds with a
// thousand or a million timers pending and allocate nothing, several times
// less than a container/heap (Netty's design) or time.AfterFunc; measure
// with
//
//	go test -run '^$' -bench . ./timers
//
// (dated figures: the micro-benchmarks section of bench/README.md).
package timers
