// Package engine is ringloop's event loop: Netty's SingleThreadEventLoop and
// NioEventLoop rebuilt on the completion contract of package driver.
//
// A Loop is one goroutine locked to one OS thread for its whole life. It owns
// an I/O driver (io_uring or epoll), a lock-free MPSC task ring, a tail-task
// ring and a timer heap, and runs, per iteration:
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
// # Threads, GOMAXPROCS and latency
//
// A loop blocks in the kernel (io_uring_enter or epoll_pwait) on its own
// locked thread. While it sleeps there the Go runtime sees a goroutine in a
// system call holding a P; when no other P is idle, sysmon takes that P back
// after about 20 µs and wakes another thread to poll the network, which on
// a lightly loaded server costs a thread wake-up per request. Give the
// process more Ps than it has loops (GOMAXPROCS ≥ loops + 1), or trade CPU
// for latency with WithBusyPoll. `make latency` measures both (one
// connection, 128 B ping-pong, server and client in separate processes on
// separate cores); on the 2-core VM of 2026-11-22 a loop answered in
// 94–140 µs (p50) at GOMAXPROCS=1, 75–88 µs at GOMAXPROCS=2 (net: 80–105
// µs), and 32–40 µs with a 50 µs busy-poll window.
//
// # Identity
//
// InEventLoop compares the caller's OS thread id with the loop's (sound
// because the loop's goroutine is locked to its thread). Execute does not need
// it: the wake flag already tells a running loop from a sleeping one.
package engine
