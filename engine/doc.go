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
// Panics: a panic in a task (Execute) is recovered, logged through slog with
// its stack, and the loop goes on; one in a function given to Submit fails
// its future with a *tasks.PanicError instead. A panic in a connection's
// callback ends that connection only (OnClose gets a *tasks.PanicError); one
// in another user hook (an observer, a chooser, OnUnregistered, the stall
// detector) is logged. A panic in the engine's own code (completion routing,
// the loop's iteration, its own tasks: hand-offs, idle timers, AsyncWrite
// drains, connect timeouts) is a bug in ringloop: the state it left half
// updated is not run on. The loop logs it once and
// stops: its connections are closed with an error wrapping ErrLoopPanicked,
// and its termination future fails with that error.
//
// # Driver failures: no rebuild
//
// Netty rebuilds its selector after 512 premature empty wake-ups in a row, a
// workaround for a JDK epoll bug that spun on readiness it never reported.
// ringloop does not rebuild its driver, like Go's netpoller, tokio, monoio
// and gnet. Both drivers keep waiting through their own completions, stale
// readiness and EINTR (and round epoll_wait's timeout up), so a blocking
// wait returns early only for a producer's wake that landed after the loop
// woke for another reason: one at a time, counted in Metrics.EmptyWakeups,
// never a run. What makes a wait fail is transient (EBUSY, EAGAIN: handled
// inside the drivers) or a broken ring or epoll fd (closed behind the loop's
// back, EFAULT, a wrong thread), which a rebuild cannot mend: reaping the old
// ring fails too, and closing an fd number someone else now owns would do
// harm. A failing wait is logged (at the 1st, 2nd, 4th... failure in a row),
// counted (Metrics.WaitErrors) and retried after a back-off growing to a
// second; the loop can always be shut down.
//
// Besides the task ring, which WithMaxPendingTasks may bound, a loop has a
// control ring for the library's own work: closes, aborts, half-closes and
// read or accept pauses asked from other goroutines, AsyncWrite drains,
// accepted connections handed over from another loop, dial cancels, and the
// work of ringloop's other packages (netconn's steps, the http.Handler
// adapter's responses, loopgroup.Offload's completions). It is unbounded,
// each producer holding at most one entry per connection and kind, drained
// before and after the tasks of every iteration, and refused only once the
// loop has shut down, so a full task ring never drops the library's work.
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
//     1, which is what loopgroup's default loop count does). With a spare
//     P, a locked loop spins before it sleeps (WithAdaptiveSpin): it polls
//     its driver for a window learnt from its idle gaps (up to 50 µs),
//     only while work comes back sooner than that, and only while fewer
//     than GOMAXPROCS/2 loops of the process spin, so never at
//     GOMAXPROCS=1. WithBusyPoll is the fixed, unconditional form. One
//     connection's ping-pong, io_uring locked (make bench-compare,
//     2026-11-23 21:49 UTC): 34.2 µs of CPU and 1.90 context switches per
//     round trip at GOMAXPROCS=1 (the C server: 23.5 and 1.0); at
//     GOMAXPROCS=2 the spin makes it 26k round trips/s with a 32 µs p50
//     (the C server 15k and 63 µs) for 37.7 µs of CPU. CPU affinity and
//     thread-init hooks need it (loopgroup's WithCPUAffinity,
//     WithThreadNames and WithThreadInit select it).
//   - ThreadingParked: the goroutine is not locked. When idle it parks in
//     Go's netpoller (on its epoll fd) and gives its thread and P back;
//     whichever thread polls the network resumes it, with no hand-off.
//     Non-blocking calls never block. On io_uring a parked loop runs the
//     driver's readiness variant (uring.NewReady): readiness from epoll,
//     the receives and sends of ready fds as one batch of MSG_DONTWAIT SQEs
//     per iteration, which complete inside that io_uring_enter on the
//     loop's own thread. A ring that armed them instead would run each
//     completion's work on the thread that submitted it, which a parked
//     goroutine has usually left: that thread is interrupted or woken for
//     it. (RINGLOOP_URING_PARKED=ring restores that plain-ring variant for
//     side-by-side measurements; it is not a supported setting.)
//
// DefaultThreading depends on the backend, chosen by measurement: locked on
// io_uring, parked on epoll. The figures (2026-11-23 21:49 UTC, `make
// bench-compare`, five alternating rounds, 2-core VM, load average under
// 0.5; bench/results/latest.md has every table) in ratios of medians:
//
//	                                   uring parked  uring locked  epoll parked  epoll locked
//	pinned, 64 conn, msgs/s ÷ C server       0.71          1.04          1.01          1.01
//	pinned, 256 conn                         0.77          1.04          1.01          0.98
//	pinned, 1000 conn, 1 KiB                 0.75          1.03          0.97          1.02
//	pinned, 64 conn, CPU/msg ÷ C server      1.62          1.06          1.03          1.06
//	in-process, 64 conn, msgs/s ÷ net        0.63          0.99          1.00          1.02
//	HTTP keep-alive 50 conn ÷ net/http       1.33          2.05          1.97          1.98
//	pinned, 1 conn, msgs/s ÷ C server        0.99          0.92          1.02          0.89
//	pinned, 1 conn, CPU/round trip ÷ C       1.43          1.46          1.10          1.35
//	pinned GOMAXPROCS=2, 1 conn, p50 ÷ net   1.06          0.48          0.94          0.47
//	in-process, 1 conn, msgs/s ÷ net         0.48          0.18          0.84          0.19
//
// On io_uring, locked wins every loaded row, by 30-45%: its ring runs
// SINGLE_ISSUER|DEFER_TASKRUN, so the kernel's completion work runs batched
// inside the loop's own io_uring_enter instead of interrupting whichever
// thread submitted. Parked wins one connection in-process (2.7x locked, yet
// half of net: a ring's completion work still runs on a thread, then the
// netpoller's eventfd wakes the loop). On epoll the two tie under load and
// parked wins one connection outright (one context switch per round trip
// instead of 1.7, 26 µs of CPU instead of 32, in-process 177k against 40k
// round trips/s): a parked loop wakes from the netpoller with no thread
// hand-off. A service that mostly waits on a few connections per loop may
// prefer parked on io_uring too (RINGLOOP_THREADING=parked).
//
// A group follows its mode's loop count: GOMAXPROCS-1 locked loops (at
// least one), GOMAXPROCS parked ones.
//
// # Builds
//
// ringloop builds for Linux only; for another GOOS the build stops on one
// line that says so. With cgo on, io_uring is built in and needs liburing's
// header and static library at build time (Debian's liburing-dev); without
// them the build stops on one line naming the fix rather than silently
// leaving io_uring out. Built with CGO_ENABLED=0 or -tags ringloop_nouring
// (for a program that needs cgo elsewhere) a loop runs on epoll, and
// BackendAuto logs the reason, "built without liburing", once at startup.
// Package cgo/liburing says why the choice is explicit.
//
// # Identity
//
// InEventLoop compares the caller's goroutine with the loop's (the address
// of the runtime's goroutine record, read from the g register on amd64 and
// arm64: no system call), which is sound in both threading modes. Execute
// does not need it: the wake flag already tells a running loop from a
// sleeping one.
package engine
