// Package loopgroup runs groups of event loops: Netty's EventLoopGroup
// (MultithreadEventLoopGroup), its choosers, the ServerBootstrap with boss
// and worker reactors, and DefaultEventExecutorGroup for blocking work.
//
// # Groups
//
// New builds N engine loops (WithLoops; default one per GOMAXPROCS, see
// below) with shared options: names, thread settings (CPU affinity, thread
// names, an init hook), and any engine.Option (WithEngineOptions). Loops
// start lazily, as in Netty, unless a thread setting needs their threads at
// once. If a loop cannot be built or set up, the loops already built are
// shut down and New returns the error. The group is an engine.Loops.
//
// Next picks a loop through the chooser (WithChooser): RoundRobin (Netty's two choosers: a
// mask when the count is a power of two, a modulo otherwise, on an unsigned
// 64-bit counter), LeastConnections, or any ChooserFactory. The executor
// methods of engine.Loops (Execute, Schedule...) and engine.Submit,
// InvokeAll and InvokeAny delegate to Next; InvokeAll and InvokeAny put every function on one loop and refuse to
// run from a loop of the group (ErrCalledFromLoop), which would wait for
// itself. The lifecycle is a loop's (see engine): Shutdown(ctx) and Close
// shut every loop down and wait for all, Done is closed once all have
// terminated, State is the least advanced loop's, and ShutdownGracefully
// gives every loop Netty's quiet period.
//
// # Servers: the three reactor models
//
// Serve(workers, network, addr, h) listens and serves every accepted
// connection on one worker loop for its whole life; workers is a Group or a
// single *engine.Loop (a group of one):
//
//   - main/sub reactors, WithBoss(boss): a boss loop accepts and hands each
//     connection to workers.Next(). On io_uring with IORING_OP_MSG_RING
//     (5.18) the fd travels as a completion posted on the worker's ring,
//     batched with the boss's other submissions; elsewhere it travels
//     through the worker's control ring (the boss loop's engine.Metrics
//     counts both).
//     Serve starts the workers first: MSG_RING needs an enabled ring.
//   - single reactor: without WithBoss the group accepts for itself; a
//     group of one accepts and serves on one loop with no hand-off.
//   - SO_REUSEPORT, WithListenerPerLoop: every loop owns a listening socket
//     on the port and accepts for itself; the kernel spreads the connections.
//
// Server.Shutdown stops accepting, waits for the connections to end and
// closes them when its context ends. Group.Dial connects from Next().
//
// The group counts live connections per loop (Group.Connections) through an
// engine.ConnObserver the bootstrap installs beside the user's handler (never
// wrapping it, so every optional handler interface reaches the handler); a
// connection handed over counts
// from the moment its loop is chosen, so LeastConnections spreads a burst of
// accepts at once.
//
// # Options
//
// Options of the group's own are few: the loop count, the name, the
// chooser, thread settings (WithThreads). Loop options (engine.Option:
// backend, threading mode, kernel profile, ioRatio, task-ring bound...) reach
// every loop through WithEngineOptions; the group repeats none of them.
// Socket and connection options (engine.ConnOption: engine.SocketOptions,
// engine.BufferLimits, engine.Timeouts, observers) mean the same wherever
// they go. A function whose only options are these takes them directly
// (engine.Listen, engine.Dial, Group.Dial); one with options of its own
// takes them through WithConnOptions, which adds them to every socket the
// call makes (Serve's listener and its connections; netconn's the same).
// SocketOptions.ReusePort sets SO_REUSEPORT on a listening socket and
// nothing more; WithListenerPerLoop is the server model that opens one such
// socket per loop. Where several values of one type travel together an
// option takes a struct in which a zero field keeps its default.
//
// # Blocking work
//
// NewExecutorGroup builds loops for handlers that block (a database, the
// disk): engine loops on the epoll backend, which never do I/O. An idle
// epoll driver costs an epoll fd and an eventfd and sleeps in epoll_wait,
// and the loop keeps its task ring, timers and futures; each loop is one
// locked OS thread, so a blocked task stalls only that loop. Offload runs a
// function there and its continuation back on the connection's loop, where
// it may write; pin a connection to one executor loop (Next in OnOpen) to
// keep its answers in order.
//
// # Loop count
//
// Netty sizes NIO groups at two threads per core, so a thread blocked in a
// system call leaves the core to its sibling. A ringloop loop does not block
// per operation: one io_uring_enter carries an iteration's I/O, and extra
// locked threads only compete with each other and with Go's own threads. The
// default is therefore at most one loop per GOMAXPROCS: GOMAXPROCS parked
// loops, or GOMAXPROCS-1 locked ones (at least one), which leave a P for the
// scheduler (WithLoops; the mode is the first loop's: parked unless
// engine.WithThreading says otherwise): more loops than Ps only add hand-offs. Measure
// with
//
//	go test -run '^$' -bench 'GroupSize|Accept' ./loopgroup
//
// (dated figures: the micro-benchmarks section of bench/README.md).
//
// Accepting, the TCP handshake and the clients dominate; MSG_RING
// saves the task-ring entry and the eventfd wake of each hand-off, and
// SO_REUSEPORT saves the hand-off altogether. Choosing a loop allocates
// nothing (BenchmarkNext).
package loopgroup
