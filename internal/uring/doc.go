// Package uring is ringloop's io_uring driver: it implements the
// driver.Driver contract on Linux io_uring through liburing (package
// internal/liburing), and hides which variant of each op the kernel allows.
// It comes in two forms: New builds a locked loop's completion ring (every
// op a request on the ring; driver.NameURing), NewBatched the parked loop's
// epoll+io_uring (readiness from epoll, receives and sends batched on a
// ring; driver.NameEpollURing).
//
// # Threads
//
// New may run on any goroutine: the ring is created disabled
// (IORING_SETUP_R_DISABLED) and Enable, called by the engine from its
// locked loop thread (or by the first Wait), starts it there. With
// SINGLE_ISSUER|DEFER_TASKRUN (6.1) every Wait and Close must then
// run on that OS thread, so the loop goroutine holds runtime.LockOSThread,
// and so must tests. Wake may be called from any goroutine.
//
// # Probe and kernel profiles
//
// New probes instead of guessing: io_uring_setup is tried with the best
// setup flags first (SINGLE_ISSUER|DEFER_TASKRUN|TASKRUN_FLAG, then
// COOP_TASKRUN|TASKRUN_FLAG, then none; EINVAL steps down a rung), then the
// ring's features and IORING_REGISTER_PROBE decide, for each op family,
// which variant runs. variants.go holds the table: each family's variants,
// best first, with the kernel release that brought each, what the probe must
// show (features the probe cannot see directly are tied to something of the
// same release it can see: multishot accept and IORING_ASYNC_CANCEL_FD to
// IORING_OP_SOCKET, 5.19; multishot recv to IORING_OP_SEND_ZC, 6.0;
// multishot poll to IORING_FEAT_RSRC_TAGS, 5.13) and the line
// Features().Reasons gives when it runs. driver.Config.Profile masks the
// probe to what an older kernel has, so the whole suite runs as on 5.10,
// 5.15, 5.19 and 6.1. The variants:
//
//   - accept: multishot (5.19), else a single-shot accept re-armed after each
//     connection;
//   - recv: multishot recv with a registered buffer ring (6.0); else a
//     single-shot recv re-armed after each chunk, selecting a buffer from the
//     buffer ring (5.19); else (polled recv) a single-shot POLL_ADD for
//     POLLIN, then a recv with MSG_DONTWAIT into a buffer the driver lends
//     from its own pool, polled again after each chunk (or after EAGAIN).
//     A receive that finds no buffer (ENOBUFS, or an empty pool) waits in
//     the driver and is re-armed by the next Wait, which first hands back
//     every buffer the callbacks released;
//   - send: one SEND per chunk, continued after partial sends, the buffer
//     pinned (runtime.Pinner) until the final completion;
//   - poll: multishot (5.13), else re-armed single-shot;
//   - cancel: IORING_OP_ASYNC_CANCEL by user_data; CancelAll by fd with
//     IORING_ASYNC_CANCEL_FD|ALL (5.19) or one cancel per op;
//   - wait: IORING_ENTER_EXT_ARG timeouts (5.11), else a timeout SQE;
//   - wake: an eventfd that always has a read pending in the ring;
//   - MsgRing: IORING_OP_MSG_RING (5.18) posts a completion on another
//     loop's ring; without it MsgRing fails and the caller uses a task ring.
//
// # One file per op family
//
// The table in variants.go holds each family's probe and reasons (its
// variants) and how its completions are dispatched; the family's own file
// holds the rest of it: the method that arms the op, what the chosen
// variant changes in it, its completion handling and, for receives and
// sends, its form in the epoll+io_uring batch. The files: accept.go,
// recv.go (with the buffers' setup), send.go, connect.go, poll.go,
// closefd.go, cancel.go, msgring.go, nop.go, and wake.go for how a Wait
// ends (its timeout and Wake). The SQE an op submits is written whole in Go
// (liburing.SQE): the cgo shim has no code per op. Adding an op is its file
// and its rows in variants.go (its kind, completion handler, variants).
//
// # Why receives poll first before 5.19
//
// A buffer-select receive (PROVIDE_BUFFERS, 5.7) takes its buffer when it
// is first issued and, finding no data, keeps it while it waits (kernels
// put the buffer back when a request goes to wait only from 5.18-5.19); a
// waiting receive that is cancelled (its connection closed by the server)
// frees the buffer in the kernel without reporting it, so it never comes
// back (io_clean_op, by the kernel's source). Debian's 5.10, whose io_uring
// is 5.15's backported, keeps it: every idle connection held one of the
// loop's 256 buffers, the 257th connection's first receive failed with
// ENOBUFS at once and at every re-arm, and its request sat unread until a
// header timeout closed it (websocket's TestHubThousandConnections, 1000
// connections on two loops; engine's TestIdleConnsLeaveBuffersForNewOnes
// fails there the same way). A host kernel under the 5.10 profile puts the
// buffer back, so only the real kernel showed it. Before 5.19, and wherever
// registering a buffer ring fails, the driver therefore lends a buffer only
// once the socket is readable, and the MSG_DONTWAIT receive (REQ_F_NOWAIT:
// it completes, or fails with EAGAIN, in the io_uring_enter that submits it)
// holds it only that long. It costs an SQE and a CQE more per chunk, and an
// io_uring_enter more where nothing else was to be submitted: the receive
// goes in after the poll's completion is reaped (BenchmarkSendRecv under
// the 5.10 profile counts the enters per round trip). A POLL_ADD linked to
// a buffer-select receive would save that enter; it is not used: its
// receive, were it to find no data after all, could lose its buffer on
// these kernels.
//
// # epoll+io_uring: the parked loop's driver
//
// NewBatched builds the driver the engine gives a parked loop on io_uring,
// named driver.NameEpollURing ("epoll+io_uring") in Features and in the
// engine's BackendInfo. Readiness comes from an epoll set, with the epoll
// driver's own code (package internal/epoll's batched form: registration,
// edges, accepts, connects, closes, polls), and the loop parks on the epoll
// fd in Go's netpoller as the epoll driver's parked loop does; the ring has
// no eventfd. The receives and sends of the fds found ready are queued as
// RECV and SEND SQEs with MSG_DONTWAIT and handed to the kernel in one
// io_uring_enter per Wait, without GETEVENTS. MSG_DONTWAIT makes the kernel
// mark the request REQ_F_NOWAIT (io_uring/net.c, the send and recv prep),
// and a request so marked that would block fails with -EAGAIN
// (io_queue_async) instead of arming a poll: each request therefore
// completes inside the enter, on the thread that made it, with no task work
// and no thread to wake (TestDontwaitCompletesInline checks it on this
// kernel). -EAGAIN clears the fd's readiness until its next edge. An accept
// SQE does not honour the listener's O_NONBLOCK (IORING_ACCEPT_DONTWAIT is
// 6.10): it would arm a poll, so the driver accepts with accept4(2), as the
// epoll driver does. It needs only RECV and SEND (5.6), so every profile
// gets the same driver; it has no MSG_RING (loops message it through task
// rings). A Wait with few receives and sends (up to directMax) does them
// with recv(2) and send(2) instead: an io_uring_enter costs the SQE and CQE
// round trip and the send buffers' pinning on top of the system calls it
// replaces, so the ring pays only from a few ops a Wait
// (TestBatchedFewOpsAreDirect).
//
// The batch is written into the ring's shared memory from Go and entered
// with a raw system call (no cgo call): a cgo call as long as a batch of
// receives and sends is, to the scheduler, a system call, and at
// GOMAXPROCS=1 it hands the loop's P to another thread and back, which
// costs voluntary context switches on every message.
//
// Against the epoll driver's parked loop it replaces a recv(2) or send(2)
// per ready connection with one io_uring_enter per Wait (the dated figures:
// the micro-benchmarks section of bench/README.md; the comparison across
// peers: make bench-compare).
//
// A parked loop on a plain ring (the design before this one: an eventfd
// registered with the ring, requests armed single-shot from whichever
// thread the goroutine ran on) is gone: the kernel runs a request's
// completion work on the thread that submitted it, which a parked goroutine
// has usually left, so that thread was interrupted or woken for it (the
// bracketed figures in bench/README.md). New builds a locked loop's ring
// and refuses driver.Config.Parked.
//
// When io_uring cannot be set up at all, New's error wraps both
// driver.ErrUringUnavailable and the errno, and says what it means (EPERM:
// blocked by seccomp or kernel.io_uring_disabled; ENOSYS: kernel without
// io_uring; ENOMEM: RLIMIT_MEMLOCK too small before 5.12). Built without
// liburing (CGO_ENABLED=0, or the build tag ringloop_nouring), New always
// fails with driver.ErrUringUnavailable, saying which.
//
// # Completions and tags
//
// The engine's tags never travel through the kernel: each op gets a slot in
// the driver's op table, and its SQEs carry the slot index and a generation
// (with the Reserved bit set), so a completion for an ended op is recognised
// as stale and dropped. An op ends with exactly one final completion, after
// which its slot and tag are released. A CQE without the Reserved bit was
// posted by another loop's MsgRing and carries an engine tag as is.
//
// # Cost
//
// Ops are written as whole SQEs into C memory without cgo calls; each Wait
// is one cgo call that returns buffers to the buffer ring, copies the SQEs
// into the ring, submits, waits and copies the CQEs out — one
// io_uring_enter in the common case, none when nothing is pending. The CQ
// never loses a completion: with FEAT_NODROP the kernel keeps overflowed
// CQEs and the shim flushes them as soon as the CQ is drained. Steady state
// allocates nothing: the op table, tag index, SQE and CQE arrays are
// reused, and Send's pin reuses a Pinner per op slot.
//
// # Designs measured and not used
//
// Three designs were measured and left out; the figures and the commands
// that reproduce them are in bench/README.md ("internal/uring, designs
// measured and not used"), BenchmarkFixedFiles and BenchmarkSendZC among
// this package's benchmarks.
//
// Registered files (IOSQE_FIXED_FILE) spare a request the fget and fput of
// its socket (atomic in a Go process, whose file table many threads share).
// The saving was below the benchmark's noise, and using them would add a
// registration update at every accept and close, while the epoll+io_uring
// driver's flushes of few ops use send(2) and recv(2), which cannot name a
// registered file. A CPU profile of the parked echo server had almost all
// of its CPU in the kernel's TCP path: there is little to win here.
//
// SEND_ZC does not pay on loopback: loopback copies a zerocopy skb's pages
// when it delivers it to a local socket (skb_orphan_frags_rx, from
// __netif_receive_skb_core and ip_local_deliver_finish; the "Loopback"
// section of the kernel's MSG_ZEROCOPY documentation), so every
// notification reports IORING_NOTIF_USAGE_ZC_COPIED and SEND_ZC only adds
// page pinning and a second CQE. Off loopback it may pay for large sends
// (the same documentation), with the buffer held until the notification;
// not measured here.
//
// SQPOLL trades a core for the submission path, and here submission is a
// small part of the CPU and there is no core to spare. The SQ thread
// belongs to the server process and inherits its affinity, so it competed
// with the loop it served on the loop's core (or took the client's core
// with IORING_SETUP_SQ_AFF); no rate was gained, and it saved no system
// calls, for the loop's calls are mostly the waits for completions, which
// SQPOLL leaves (saving those too means polling the CQ, a second spinner on
// the same core). With SQPOLL the kernel refuses the TASKRUN setup flags
// (EINVAL).
//
// # Benchmarks
//
//	go test -run '^$' -bench . ./internal/uring
//
// measures a no-op and a loopback send and receive per op, one op or 32 per
// Wait: batching 32 costs one io_uring_enter and one cgo call for all of
// them (dated figures: the micro-benchmarks section of bench/README.md).
// BenchmarkBatchedSendRecv measures the epoll+io_uring driver;
// BenchmarkFixedFiles and BenchmarkSendZC two of the designs above.
package uring
