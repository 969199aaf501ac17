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
//     locked goroutine then needs two thread hand-offs to run again (with
//     no P left, the runtime also wakes another thread to poll the
//     network). Give the process more Ps than loops (GOMAXPROCS >= loops +
//     1, which is what loopgroup's default loop count does), or trade CPU
//     for latency with WithBusyPoll. One connection's ping-pong, io_uring
//     locked (make bench-compare, 2026-11-23): 38.1 µs of CPU and 1.92
//     context switches per round trip at GOMAXPROCS=1, 27.1 µs and 1.27 at
//     GOMAXPROCS=2 (the C server: 25.4 and 1.0). CPU affinity and thread-init hooks need it
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
//     interrupted for it. So a parked io_uring loop arms its requests
//     single-shot, each from the thread it runs on (package uring).
//
// DefaultThreading depends on the backend, chosen by measurement: locked on
// io_uring, parked on epoll. The figures (2026-11-23 18:37 UTC, `make
// bench-compare`, five alternating rounds, 2-core VM, load average 1-2;
// bench/results/latest.md has every table) in ratios of medians:
//
//	                                   uring parked  uring locked  epoll parked  epoll locked
//	pinned, 64 conn, msgs/s ÷ C server       0.78          1.01          0.98          0.99
//	pinned, 256 conn                         0.73          1.04          1.01          1.01
//	pinned, 1000 conn, 1 KiB                 0.61          1.01          1.05          0.99
//	pinned, 64 conn, CPU/msg ÷ C server      1.45          1.07          1.03          1.03
//	in-process, 64 conn, msgs/s ÷ net        0.57          0.98          0.98          0.96
//	HTTP keep-alive 50 conn ÷ net/http       1.36          2.30          2.20          2.15
//	pinned, 1 conn, msgs/s ÷ C server        0.93          0.82          1.00          0.77
//	pinned, 1 conn, CPU/round trip ÷ C       1.45          1.50          1.06          1.50
//	in-process, 1 conn, msgs/s ÷ net         0.17          0.12          0.86          0.18
//
// On io_uring, locked wins every loaded row, by 30-70%: its ring runs
// SINGLE_ISSUER|DEFER_TASKRUN, so the kernel's completion work runs batched
// inside the loop's own io_uring_enter instead of interrupting whichever
// thread submitted. Parked wins only the one-connection rows (13% pinned;
// 38% in-process, where both are far behind net). The parked io_uring
// column predates single-shot arming; with it, one connection in-process
// makes 2.7x the round trips (96-109k/s against 37-41k; net about 210k) and
// 64 connections pinned 4-10% fewer (package uring has the figures). On epoll the two tie
// under load and parked wins the one-connection rows outright (one context
// switch per round trip instead of 1.8, 27 µs of CPU instead of 38,
// in-process 175k against 37k round trips/s): a parked loop wakes from the
// netpoller with no thread hand-off. A service that mostly waits on a few
// connections per loop may prefer parked on io_uring too
// (RINGLOOP_THREADING=parked).
//
// A group follows its mode's loop count: GOMAXPROCS-1 locked loops (at
// least one), GOMAXPROCS parked ones.
//
// # Identity
//
// InEventLoop compares the caller's goroutine with the loop's (the address
// of the runtime's goroutine record, read from the g register on amd64 and
// arm64: no system call), which is sound in both threading modes. Execute
// does not need it: the wake flag already tells a running loop from a
// sleeping one.
package engine
