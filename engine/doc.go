// Package engine is ringloop's event loop: Netty's SingleThreadEventLoop and
// NioEventLoop rebuilt on a driver contract of completions (internal/driver).
//
// This doc states the engine's rules and the reasons for them. Figures live
// in bench/results (make bench-compare writes latest.md and keeps every
// sweep's JSON in bench/results/history); where a rule was chosen by
// measurement the doc says which cases of that report decide it.
//
// # Use
//
// New builds a Loop (io_uring where the kernel allows it, else epoll; the
// reason is logged). Listen serves a TCP or Unix address with a Handler,
// whose OnOpen, OnData and OnClose run on the loop one at a time, so a
// connection's state needs no lock:
//
//	loop, err := engine.New()
//	ln, err := engine.Listen(loop, "tcp", "127.0.0.1:7000", h)
//	...
//	ln.Close()
//	loop.Shutdown(ctx)
//
// In OnData a handler reads b (valid during the call), writes with
// Conn.Write (gathered and sent once per loop iteration), and keeps an
// unfinished frame with Conn.Keep to get it back in front of the next bytes
// (package frame splits lines, length-prefixed and delimited frames for
// it). Optional interfaces add writability changes (WritabilityHandler),
// half-close (HalfCloseHandler), idle timeouts (IdleHandler) and a last
// word before the loop's shutdown closes the connection (ShutdownHandler). Other
// goroutines reach a connection through AsyncWrite (which the loop can hold
// back for a while: HoldAsync) and the Conn methods that hand themselves to
// the loop, and the loop through the Loops interface (Execute and the
// Schedule family, the same on a loop and a group) and Submit. Dial and DialAsync connect; Adopt and ListenFD serve
// sockets the process inherited; SetHandler hands a connection to another
// handler (a protocol upgrade). Package loopgroup runs groups of loops;
// package packet serves datagram sockets (UDP, unixgram) on a loop, which
// Metrics counts (PacketsReceived, PacketsSent, PacketsDropped).
//
// # How a loop runs
//
// A Loop is one goroutine that runs all of its work serially (locked to an
// OS thread or not: see Threading below). It owns an I/O driver (io_uring or
// epoll), a lock-free MPSC task ring, a tail-task ring, a control ring and a
// timer heap, and runs, per iteration:
//
//  1. Strategy: tasks pending → a non-blocking wait; otherwise block until the
//     earliest timer deadline, or until woken.
//  2. Wake protocol (Netty's nextWakeupNanos, race-free by construction): before
//     blocking the loop publishes its wake deadline in an atomic and re-checks
//     the task rings. A producer that enqueued does
//     `if nextWake.Swap(awake) != awake { driver.Wake() }`, so however many
//     producers there are, a blocking wait costs at most one driver wake.
//     A locked loop's wake is an eventfd write; a parked loop's is a past
//     read deadline on the fd it parks on, which readies its goroutine
//     inside the runtime with no system call (package internal/park).
//  3. Dispatch completions.
//  4. Run due timers and tasks for ioTime*(100-ioRatio)/ioRatio (ioRatio 100:
//     no limit; at least 64 tasks when no I/O ran), reading the clock every 64
//     tasks; then drain the tail ring (ExecuteAfterIteration), which is where
//     per-iteration flushes belong.
//  5. While shutting down: close registrations and confirm shutdown with
//     Netty's quiet-period / timeout rules.
//
// Besides the task ring, which WithMaxPendingTasks may bound, a loop has a
// control ring for the library's own work: closes, aborts, half-closes and
// read or accept pauses asked from other goroutines, AsyncWrite drains,
// accepted connections handed over from another loop, dial cancels, future
// listeners, and the work of ringloop's other packages
// (netconn's steps, the http.Handler adapter's responses,
// loopgroup.Offload's completions; they reach it through Loop.Control,
// whose argument only this module can make: see package internal/loopctl).
// It is unbounded, each producer holding at most one entry per connection
// and kind, drained before and after the tasks of every iteration, and
// refused only once the loop has shut down, so a full task ring never drops
// the library's work.
//
// Panics: a panic in a task (Execute) is recovered, logged through slog with
// its stack, and the loop goes on; one in a function given to Submit fails
// its future with a *tasks.PanicError instead. A panic in a connection's
// callback ends that connection only (OnClose gets a *tasks.PanicError); one
// in another user hook (an observer, a chooser, OnUnregistered, the stall
// detector) is logged. A panic in the engine's own code (completion routing,
// the loop's iteration, its own tasks: hand-offs, idle timers, AsyncWrite
// drains, connect timeouts) is a bug in ringloop: the state it left half
// updated is not run on. The loop logs it once and stops: its connections
// are closed with an error wrapping ErrLoopPanicked, and Shutdown and Close
// return that error.
//
// # Drivers
//
// The contract between a loop and its I/O driver (ops, tags, completions,
// the optional capabilities, the rules every driver keeps) is private, in
// package internal/driver: no user can supply a driver, and a private
// contract lets a new op be added without breaking anyone. What a user sees
// of a driver is named here: Features (BackendInfo.Features), DriverConfig
// (WithDriverConfig's kernel profile, spelled "5.10", "5.15", "5.19", "6.1"
// or "native" as in RINGLOOP_KERNEL_PROFILE, and sizes) and
// ErrUringUnavailable. The README's Changes section maps the old driver
// package's names to these.
//
// Completions find their owner by tag: a slot index and a generation in
// the loop's slot table (one table type, for registrations and for the
// listeners that hand connections to the loop), so a completion that
// arrives after its slot was freed and reused is recognised as stale and
// dropped.
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
// # Lifecycle
//
// New builds a loop; it starts lazily, on its first task or registration (a
// failed start rolls the state back), and serves until Shutdown(ctx) or
// Close, Go's idiom (net/http's Server.Shutdown, io.Closer): both close the
// connections and listeners and wait for the loop to terminate, Shutdown at
// most until ctx ends. Done is closed once it has terminated; State reports
// where it is, in Netty's order: NotStarted → Started → ShuttingDown →
// Shutdown (tasks refused) → Terminated, compared with >=. The one Netty
// name kept is ShutdownGracefully(quiet, timeout), for its quiet period: it
// keeps running tasks until none ran for the quiet period or the timeout
// passed, and returns at once (wait with Shutdown or Done).
//
// When the shutdown begins, the loop closes its listeners and connections,
// as Netty's closeAll does. Netty closes each channel through its Unsafe,
// past the pipeline, so a handler learns of it in channelInactive, when it
// can no longer write; a Netty program that says goodbye walks a
// ChannelGroup before it shuts the group down. Here the loop does that
// step: a handler that implements ShutdownHandler gets OnShutdown(c) first,
// on the loop, and writes its last message (WebSocket's close frame with
// 1001, TLS's close_notify); then the connection closes gracefully: what was written is
// flushed, then the fd is closed and OnClose gets ErrShutdown. The loop does
// not wait for the peer's answer. The flush runs while the quiet period
// runs and, once the loop terminates, for at most each connection's close
// timeout (Timeouts.Close), cut at the shutdown's timeout
// (ShutdownGracefully's; 15 s, Netty's default, for Shutdown and Close)
// but never less than a second; a connection still flushing then is reset,
// its unsent bytes dropped, and OnClose gets ErrCloseTimeout.
// Every task accepted before the loop reached Shutdown runs: producers announce
// themselves in the same atomic word that holds the state, and the loop drains
// its rings once the last announced producer has finished offering.
//
// # Threading: parked or locked
//
// WithThreading (or RINGLOOP_THREADING=parked|locked; an option wins) picks
// how a loop's goroutine waits; Threading and Backend report it.
//
//   - ThreadingParked, the default on both backends: the goroutine is not
//     locked. When idle it parks in Go's netpoller on its epoll fd and gives
//     its thread and P back; whichever thread polls the network resumes it,
//     with no hand-off, and goroutines it wakes (an http.Handler, a
//     net.Conn's reader) run on the same P without an OS context switch;
//     a goroutine that hands it work wakes it the same way, with no system
//     call. On io_uring a parked loop runs the epoll+io_uring driver
//     (BackendInfo's Features.Backend; package internal/uring says how):
//     readiness from epoll, the receives and sends of the ready fds as one
//     batch of MSG_DONTWAIT SQEs per iteration, which complete inside that
//     io_uring_enter on the loop's own thread (no poll armed, no task work
//     for a thread the goroutine has left). The loop runs its iterations
//     inside the wait it woke from (driver.Resumer) until one would not
//     sleep: Go's netpoller forgets an fd's readiness each time a wait
//     begins, so a wait begun anew must first poll the epoll fd, one system
//     call per wake-up that a wait going on saves. A group runs GOMAXPROCS
//     parked loops.
//   - ThreadingLocked: the goroutine is locked to one OS thread for life
//     (Netty's model) and blocks in the kernel (io_uring_enter or
//     epoll_pwait) when idle; io_uring runs SINGLE_ISSUER|DEFER_TASKRUN
//     where the kernel has them. While it sleeps the Go runtime sees a
//     goroutine in a system call holding a P, so every goroutine it wakes
//     or is woken by costs thread hand-offs. CPU affinity and
//     thread-init hooks need it (loopgroup.WithThreads selects it); a
//     group runs GOMAXPROCS-1 locked loops (at least one).
//
// The default is decided by measurement: make bench-compare runs every
// backend in both modes beside its peers; its results
// (bench/results/latest.md) hold the "automatic default against the best
// configuration", "each configuration scored as the default" and "io_uring
// against epoll" tables, and bench/results/history keeps every sweep's JSON.
// In the latest sweep (2026-11-28 18:55, make bench-compare) io_uring
// parked, the default, comes within 5% of its family's best row in 31 of 41
// family × case groups, with 0.970 of the best's throughput and 1.034 of
// its CPU per request in geometric mean, and its best round reaches the best
// row's worst in 39; the other configurations score (groups within 5% /
// throughput / CPU) epoll locked 22 / 0.811 / 1.208, epoll parked 36 / 0.978
// / 1.017, io_uring locked 25 / 0.814 / 1.223. Of the 9 sweeps kept in
// bench/results/history with this default (2026-11-24 21:28 to 2026-11-28
// 18:55), it led every other configuration on all three scores (groups
// within 5%, geometric-mean throughput, geometric-mean CPU) in 6; in the
// other 3, 2026-11-27 04:37: epoll parked led it on all three (a loss);
// 2026-11-27 08:13: against epoll parked it was ahead on groups within 5%,
// level on throughput, behind on CPU (split); 2026-11-28 18:55: epoll parked
// led it on all three (a loss). No configuration is within 5% of the best
// everywhere: a case's rounds spread wider than that (latest.md gives each
// row's min–max). (make bench-readme writes this paragraph from those
// results.)
//
// Where goroutines share the work with the loop (the adapter, net/http and
// crypto/tls over netconn, in-process clients) a locked loop loses: its
// hand-offs are OS context switches (latest.md's netconn+tls and adapter
// rows, locked against parked). Where the loop works alone the two modes
// are close (the echo rows). So parked is the default everywhere, and on
// io_uring the epoll+io_uring driver makes it as cheap as epoll, or cheaper
// where there are many connections (one system call per iteration for all
// the I/O). At one connection doing one request-response at a time there
// is nothing to batch: the driver then makes the receive and send calls
// itself, as epoll does, since an io_uring_enter for a few ops costs more
// than the calls it replaces. Pick locked for a loop that owns a core
// (affinity, thread-init hooks).
//
// # Adaptive spin
//
// With a spare P (GOMAXPROCS ≥ 2) a loop of either mode may poll its driver
// for a while after its work instead of sleeping at once (WithSpin:
// up to 50 µs, at most GOMAXPROCS/2 loops of the process at a
// time, never at GOMAXPROCS=1). The reason to spin: a sleeping loop's next
// work waits for a wake-up, which on a virtual machine costs more than a
// short poll, and a peer in another process that answers sooner is caught
// by the spin. The reason not to: where the peer is a goroutine of the same
// process, a parked loop that sleeps lets the peer's thread run it next on
// the same thread with no wake-up at all, while a spinning loop keeps its P
// and leaves the peer's thread to sleep and be woken for every reply. No
// fixed policy is right for both, so each loop measures both on its own
// traffic (wall time per unit of work, by epochs of busy iterations), spins
// only while spinning measures at least a tenth faster (else sleeping costs
// less CPU), and now and then runs the other policy for an epoch to follow
// a change in the traffic (see spinner for the rules). A loop whose work
// comes less often than the window stops spinning. Measured by make
// bench-compare: the echo cases with the client in another process
// (p2-echo, p4-echo) and in the loop's own (i2-echo) are the two sides of
// this trade (bench/results/latest.md).
//
// # Observability
//
// Every loop has a name, its label in metrics and logs: WithName's, else
// "loop-<n>" (n counts the loops the process built) or, in a loopgroup,
// "<group>-<index>". The same code builds the same names at every start, so
// a dashboard's series survive a restart. Metrics reads a loop's counters
// from any goroutine, as one plain struct (expvar takes it as it is:
// expvar.Func(func() any { return l.Metrics() })); package
// github.com/ringloop/ringloop/metrics (a module of its own, so that this
// one does not depend on Prometheus) exports them, labelled with the loop's
// Name and Backend.
//
// The stall detector is on by default (250 ms; stall.go says why
// that figure): a task, timer or handler callback that blocks the loop longer is
// logged as a warning, while it still blocks, naming the loop, the function
// it blocks in (file and line) and the loop goroutine's stack. Load is not
// reported: a batch of short callbacks slow as a whole, or a loop the
// machine left without a CPU (late watchdog ticks count short), is not a
// block. The loop pays two atomic stores per piece of work, no clock read;
// one watchdog goroutine per process samples the loops. WithStallDetector
// changes the threshold, takes the reports instead of the log, or turns it
// off (0).
//
// A recovered panic is logged as one record with "at" (the function, file
// and line that panicked) and "stack" (the frames below, as a list); see
// package internal/panicstack for why not the multi-line text.
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
// Package internal/liburing says why the choice is explicit.
//
// # Identity
//
// InEventLoop compares the caller's goroutine with the loop's (the address
// of the runtime's goroutine record, read from the g register on amd64 and
// arm64: no system call), which is sound in both threading modes. Execute
// does not need it: the wake flag already tells a running loop from a
// sleeping one.
package engine
