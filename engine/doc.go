// Package engine is ringloop's event loop: Netty's SingleThreadEventLoop and
// NioEventLoop rebuilt on the completion contract of package driver.
//
// A Loop is one goroutine that runs all of its work serially (locked to an
// OS thread or not: see Threading below). It owns an I/O driver (io_uring or
// epoll), a lock-free MPSC task ring, a tail-task ring and a timer heap, and
// runs, per iteration:
//
//  1. Strategy: tasks pending → a non-blocking wait; otherwise block until the
//     earliest timer deadline, or until woken.
//  2. Wake protocol (Netty's nextWakeupNanos, race-free by construction): before
//     blocking the loop publishes its wake deadline in an atomic and re-checks
//     the task rings. A producer that enqueued does
//     `if nextWake.Swap(awake) != awake { driver.Wake() }`, so however many
//     producers there are, a blocking wait costs at most one driver wake.
//  3. Dispatch completions.
//  4. Run due timers and tasks for ioTime*(100-ioRatio)/ioRatio (ioRatio 100:
//     no limit; at least 64 tasks when no I/O ran), reading the clock every 64
//     tasks; then drain the tail ring (ExecuteAfterIteration), which is where
//     per-iteration flushes belong.
//  5. While shutting down: close registrations and confirm shutdown with
//     Netty's quiet-period / timeout rules.
//
// A panic in a task is recovered, logged through slog with its stack, and the
// loop goes on.
//
// # Lifecycle
//
// States follow Netty: NotStarted → Started → ShuttingDown → Shutdown →
// Terminated. The loop starts lazily, on its first task or registration; a
// failed start rolls the state back. ShutdownGracefully(quiet, timeout) keeps
// running tasks until none ran for the quiet period or the timeout passed.
// Every task accepted before the loop reached Shutdown runs: producers announce
// themselves in the same atomic word that holds the state, and the loop drains
// its rings once the last announced producer has finished offering.
//
// # Threading: parked or locked
//
// WithThreading (or RINGLOOP_THREADING=parked|locked; an option wins) picks
// how a loop's goroutine waits; Threading and Backend report it.
//
//   - ThreadingLocked: the goroutine is locked to one OS thread for life
//     (Netty's model) and blocks in the kernel (io_uring_enter or
//     epoll_pwait) when idle; io_uring runs SINGLE_ISSUER|DEFER_TASKRUN
//     where the kernel has them, the cheapest completion path. While it
//     sleeps the Go runtime sees a goroutine in a system call holding a P;
//     when no other P is idle, sysmon takes that P after about 20 µs and a
//     locked goroutine then needs two thread hand-offs to run again. Give
//     the process more Ps than loops (GOMAXPROCS >= loops + 1, which is
//     what loopgroup's default loop count does), or trade CPU for latency
//     with WithBusyPoll. CPU affinity and thread-init hooks need it
//     (loopgroup's WithCPUAffinity, WithThreadNames and WithThreadInit
//     select it).
//   - ThreadingParked: the goroutine is not locked. When idle it parks in
//     Go's netpoller (io_uring: an eventfd registered with the ring; epoll:
//     the epoll fd) and gives its thread and P back; whichever thread polls
//     the network resumes it, with no hand-off. Non-blocking submissions
//     and eventfd reads never block. The ring is plain (no SINGLE_ISSUER,
//     DEFER_TASKRUN or COOP_TASKRUN: any thread may submit, and completion
//     work must not wait for the submitting thread's next system call), so
//     the kernel runs a request's completion work on the thread that
//     submitted it, which may by then run other goroutines or sleep: it is
//     interrupted for it.
//
// DefaultThreading is ThreadingParked, chosen by measurement (2026-11-23,
// 2-core VM shared with heavy other jobs, load average 15-27, so
// throughput swung 2-3x between runs; the CPU and context-switch costs were
// steady). In-process, clients as goroutines of the server's process,
// GOMAXPROCS=2, 50 connections x 1 KiB echo, process CPU per message over
// five alternating rounds (medians): io_uring parked 16.3 µs, locked 17.7;
// epoll parked 17.8, locked 19.5; net 17.9. Cross-process, server pinned,
// one connection, 128 B ping-pong, server cost per round trip at
// GOMAXPROCS=1 (two rounds): epoll parked 0.97 voluntary context switches
// and 25-32 µs CPU, epoll locked 1.35-1.83 and 30-39 µs, net 1.67-1.87 and
// 34-40 µs; io_uring parked 1.69-1.81 and 40-47 µs, io_uring locked
// 1.64-1.79 and 37-42 µs (GOMAXPROCS=2: the same ranking). A parked loop
// also locks no thread, so a group runs one loop per GOMAXPROCS instead of
// GOMAXPROCS-1.
//
// Pick ThreadingLocked for io_uring loops that own dedicated, pinned cores
// (the cross-process io_uring figures above favour it by about 10% of CPU:
// a parked ring's completion work interrupts whichever thread submitted
// it), and whenever a thread setting is needed (affinity, names, priority,
// a cgo library with thread-local state).
//
// # Identity
//
// InEventLoop compares the caller's goroutine with the loop's (the address
// of the runtime's goroutine record, read from the g register on amd64 and
// arm64: no system call), which is sound in both threading modes. Execute
// does not need it: the wake flag already tells a running loop from a
// sleeping one.
package engine
