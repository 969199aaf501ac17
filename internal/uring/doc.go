// Package uring is ringloop's io_uring driver: it implements the
// driver.Driver contract on Linux io_uring through liburing (package
// internal/liburing), and hides which variant of each op the kernel allows.
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
// COOP_TASKRUN|TASKRUN_FLAG, then none; EINVAL steps down a rung), the
// ring's features and IORING_REGISTER_PROBE decide the rest, and the buffer
// ring is used if registering one succeeds. Features that the probe cannot
// see directly are tied to an opcode of the same release: multishot accept
// and IORING_ASYNC_CANCEL_FD to IORING_OP_SOCKET (5.19), multishot recv to
// IORING_OP_SEND_ZC (6.0), multishot poll to IORING_FEAT_RSRC_TAGS (5.13).
// driver.Config.Profile masks the result to what an older kernel has, so the
// whole suite runs as on 5.10, 5.15, 5.19 and 6.1. Features().Reasons says
// which variant of each op runs and why:
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
// the 5.10 profile: 2 enters per 64-byte round trip instead of 1, 0.064
// instead of 0.032 with 32 a Wait). A POLL_ADD linked to a buffer-select
// receive would save that enter; it is not used: its receive, were it to
// find no data after all, could lose its buffer on these kernels.
//
// # Parked loops: readiness first, I/O through the ring
//
// NewReady builds the variant the engine gives a parked loop. Readiness
// comes from an epoll set, with the epoll driver's own code (package
// internal/epoll's batched form: registration, edges, accepts, connects, closes,
// polls), and the loop parks on the epoll fd in Go's netpoller as the epoll
// driver's parked loop does; the ring has no eventfd. The receives and sends
// of the fds found ready are queued as RECV and SEND SQEs with MSG_DONTWAIT
// and handed to the kernel in one io_uring_enter per Wait, without
// GETEVENTS. MSG_DONTWAIT makes the kernel mark the request REQ_F_NOWAIT
// (io_uring/net.c, the send and recv prep), and a request so marked that
// would block fails with -EAGAIN (io_queue_async) instead of arming a poll:
// each request therefore completes inside the enter, on the thread that
// made it, with no task work and no thread to wake
// (TestDontwaitCompletesInline checks it on this kernel). -EAGAIN clears
// the fd's readiness until its next edge. An accept SQE does not honour the
// listener's O_NONBLOCK (IORING_ACCEPT_DONTWAIT is 6.10): it would arm a
// poll, so the variant accepts with accept4(2), as the epoll driver does.
// It needs only RECV and SEND (5.6), so every profile gets the same
// variant; it has no MSG_RING (loops message it through task rings). A
// Wait with up to three receives and sends does them with recv(2) and
// send(2) instead: an io_uring_enter costs the SQE and CQE round trip and
// the send buffers' pinning on top of the system calls it replaces, so the
// ring pays from four ops a Wait (directMax has the measurements;
// TestReadyFewOpsAreDirect).
//
// The batch is written into the ring's shared memory from Go and entered
// with a raw system call (no cgo call): a cgo call as long as a batch of
// receives and sends is, to the scheduler, a system call, and at
// GOMAXPROCS=1 it hands the loop's P to another thread (through the cgo
// shim the variant paid 4.5x epoll's voluntary context switches per message
// on a pinned 64-connection echo; raw, 1.3x).
//
// Against the epoll driver's parked loop it costs less CPU and fewer
// voluntary context switches per request on the loaded rows, and 0.2-0.4x
// the system calls per message (dated figures: the micro-benchmarks section
// of bench/README.md; the comparison across peers: make bench-compare).
//
// A parked loop on a plain ring (the variant before this one: an eventfd
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
// Ops are written as fixed-size descriptors into C memory without cgo
// calls; each Wait is one cgo call that returns buffers to the buffer ring,
// preps every SQE, submits, waits and copies the CQEs out — one
// io_uring_enter in the common case, none when nothing is pending. The CQ
// never loses a completion: with FEAT_NODROP the kernel keeps overflowed
// CQEs and the shim flushes them as soon as the CQ is drained. Steady state
// allocates nothing: the op table, tag index, descriptor and CQE arrays are
// reused, and Send's pin reuses a Pinner per op slot.
//
// # Designs measured and not used
//
// Measured 2026-11-26 on the shared 2-core VM (Linux 6.18) while other
// builds ran (load average 2-5): ranges over repeated runs, variants
// alternated; process CPU time is the steadier figure. A CPU profile of the
// parked echo server (64 connections x 128 B) has 91% of its CPU in the
// kernel's TCP path, fget 0.7%, io_submit_sqes 0.8%: little to win here.
//
//	design            measured           figure                 verdict
//	registered files  BenchmarkFixed-    CPU per round trip     not used: no gain
//	(FIXED_FILE)      Files, 4 SQEs      9.4-11.5 µs plain,     beyond noise
//	                  an enter           9.4-10.5 registered;
//	                                     paired medians
//	                                     0.94-1.00x
//	SEND_ZC           BenchmarkSendZC    CPU vs SEND: 128 B     not used: loopback
//	                  (send + recv +     1.19-1.31x, 1 KiB      copies anyway
//	                  notification)      1.24-1.33x, 16 KiB
//	                                     1.40-1.56x, 64 KiB
//	                                     1.48-1.64x; 1 notif
//	                                     an op, all ZC_COPIED
//	SQPOLL, locked    bench harness,     CPU µs/req plain ->    not used: the SQ
//	variant           5 runs each        SQPOLL: c1 29-50 ->    thread spins on
//	                                     59-84, c64 6.6-7.5 ->  the loop's core
//	                                     8.6-22, HTTP c50
//	                                     6.7-8.2 -> 9.6-24;
//	                                     rates no higher,
//	                                     syscalls/msg the same
//
// The micro-benchmark figures are from three runs of six rounds, each
// variant one -count 1 run a round, alternated; ratios are per round, the
// median of each run given.
//
// Registered files spare a request the fget and fput of its socket (atomic
// in a Go process, whose file table many threads share); the saving is
// below the benchmark's noise, and using them would add a registration
// update at every accept and close, while the parked variant's one-op
// flushes use send(2) and recv(2), which cannot name a registered file.
// The least disturbed rounds of the two variants were equal (9.4 µs).
//
// SEND_ZC asked the kernel to report copies (IORING_SEND_ZC_REPORT_USAGE):
// every notification carried IORING_NOTIF_USAGE_ZC_COPIED. Loopback copies
// a zerocopy skb's pages when it delivers it to a local socket
// (skb_orphan_frags_rx, from __netif_receive_skb_core and
// ip_local_deliver_finish; the "Loopback" section of the kernel's
// MSG_ZEROCOPY documentation), so SEND_ZC adds page pinning and a second
// CQE and saves nothing. Off loopback it may pay for sends over about
// 10 KB (the same documentation), with the buffer held until the
// notification; not measured here.
//
// SQPOLL was an experiment build: the locked variant's rings set up
// SQPOLL|SINGLE_ISSUER (with SQPOLL the kernel refuses the TASKRUN flags:
// EINVAL), idle 50 ms, io_uring_enter only to wait for completions or, with
// IORING_ENTER_SQ_WAKEUP, when the kernel set IORING_SQ_NEED_WAKEUP; a
// group's later rings could ATTACH_WQ to the first (two rings then showed
// one iou-sqp thread; the harness's servers run one loop). The SQ thread is
// a thread of the server process, so the harness's /proc/PID/stat CPU counts
// it: sampled from /proc/PID/task, it held most of the process's ticks
// (about 80%) while the loop thread slept in io_uring_enter. It inherits the
// server's affinity, core 0, and competes there with the loop it serves:
// involuntary context switches per request 3-30x, p50 latency at one
// connection 10-25 µs lower in each pair but p99 higher, no rate gained (c64
// 43k-112k msgs/s against 87k-142k). Put on the client's core with
// IORING_SETUP_SQ_AFF (one run) it took that core: 0.25-0.42x the rate of
// the same run's parked rows. Nor did it save system calls: 0.29-0.40 per
// message against 0.28-0.38 (p1-sys-echo-c64, two runs each), for the loop's
// calls are mostly the waits for completions, which SQPOLL leaves; saving
// those too means polling the CQ, a second spinner on the same core. SQPOLL
// trades a core for the submission path; here submission is about 1% of the
// CPU (the profile above) and there is no core to spare.
//
// The harness ran the experiment build with the variable it read, alternated
// with the same command without it (the parked rows of each run are the
// control); the micro-benchmarks ran as -count 1 runs of one sub-benchmark
// each, -bench 'FixedFiles/plain$' then 'FixedFiles/registered$',
// 'SendZC/128/send$' then 'SendZC/128/send_zc$', and so on:
//
//	cd bench && RINGLOOP_EXP_SQPOLL=50 go run ./cmd/bench -mode full \
//	    -cases p1-echo-c64-128,p1-echo-c1-128,p1-http-c50 \
//	    -peers ringloop-uring,ringloop-http-uring
//	go test -run '^$' -bench 'FixedFiles|SendZC' -count 1 ./internal/uring
//
// # Benchmarks
//
//	go test -run '^$' -bench . ./internal/uring
//
// measures a no-op and a loopback send and receive per op, one op or 32 per
// Wait: batching 32 costs one io_uring_enter and one cgo call for all of
// them (dated figures: the micro-benchmarks section of bench/README.md).
// BenchmarkFixedFiles and BenchmarkSendZC measure two of the designs above.
package uring
