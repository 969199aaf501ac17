// Package epoll is the epoll I/O driver: it implements the driver.Driver
// contract with readiness underneath, the model of Netty's NioEventLoop and
// EpollEventLoop. It uses only golang.org/x/sys/unix and comes in two forms:
//
//   - plain (New): the driver performs each ready fd's recv, send and accept
//     itself. ringloop runs it where io_uring is missing or refused
//     (containers, old kernels, CGO_ENABLED=0) or when epoll is asked for.
//   - batched (NewBatched): the same driver hands the receives and sends of
//     one Wait to a Batch, which performs them together. epoll+io_uring
//     (uring.NewBatched), the default for a parked loop on io_uring, is this
//     form with a Batch that issues them as one io_uring_enter. Everything
//     below holds for both, except where a receive or send is performed.
//
// # Model
//
// Every op is prepared by its method call and acted on in the next Wait:
//
//   - Submission phase (start of Wait): sends are tried at once (a send that
//     fits the socket buffer costs one sendto and no epoll call), connects are
//     started, closes are performed, and fds that must wait for readiness are
//     added to the epoll set.
//   - Wait phase: one epoll_wait (or epoll_pwait2).
//   - Completion phase: armed receives read into one loop-owned buffer, each
//     read reported as a completion whose Data points into that buffer (valid
//     until the callback returns); accepts run accept4(SOCK_NONBLOCK |
//     SOCK_CLOEXEC); blocked sends continue; connects finish with SO_ERROR;
//     polls report the ready mask.
//
// # Interest: edge-triggered, registered once
//
// An fd is added with EPOLLIN|EPOLLOUT|EPOLLRDHUP|EPOLLET when it first needs
// to wait, and the interest never changes while it has armed ops, so no
// receive or send costs an epoll_ctl (only arming a Poll does: EPOLL_CTL_MOD
// makes the kernel report the current readiness to it). Netty's "EPOLLOUT
// only while a write is blocked" costs two MODs per blocked write; with
// EPOLLET, a writable socket raises no wakeup of its own for EPOLLOUT unless
// a write hit a full buffer first, so keeping EPOLLOUT costs nothing in the
// common case. The driver remembers each fd's readiness (set by events,
// cleared by EAGAIN), so an op armed on an already-ready fd runs without a
// new edge. When an fd's last op ends it is removed (EPOLL_CTL_DEL) at the
// next Wait, unless CloseFD closes it, which removes it for free. Each
// registration carries a generation in the event data, so events from a
// previous registration of a reused fd number are ignored. The price of
// EPOLLOUT in the stable mask is an occasional event with nothing to do;
// Wait absorbs those and never returns early because of them.
//
// # Fairness and syscall economy
//
// A receive reads at most ReadBudget times per fd per Wait (16 reads of
// Config.BufferSize, 16 KiB by default: 256 KiB), an accept at most
// AcceptBudget connections; an fd that still has data is resumed at the next
// Wait without waiting for a new edge. A short read on a stream socket means
// its queue is empty (any later data raises a new edge), so it ends the
// reading without the extra read that would return EAGAIN; the same holds
// for a partial send. When a Wait already has completions to hand over (sends
// that finished in the submission phase, budget-limited fds), it skips
// epoll_wait, but never twice in a row, so readiness is collected at least
// every other Wait.
//
// # Results
//
// Results match the io_uring driver: EOF ends a receive with Res 0; socket
// errors (EPOLLERR, EPOLLHUP) surface as the -errno of the failing system
// call, final; Cancel and CloseFD end armed ops with -ECANCELED. CloseFD ends
// every op still armed on the fd with -ECANCELED before closing it. Arming a
// second op of the same kind on an fd (two receives, two accepts, two polls,
// two connects) ends the new op at once with -EBUSY; sends queue and run in
// order. Poll is edge-triggered: it reports each readiness edge that includes
// a requested event (plus POLLERR and POLLHUP); POLLPRI adds EPOLLPRI to the
// fd's interest. An fd epoll cannot watch (a regular file) ends its ops with
// -EPERM, where io_uring would report it ready.
//
// # Timeouts and wakeups
//
// Wait uses epoll_pwait2 (Linux 5.11) for nanosecond timeouts where the
// kernel has it and the profile allows it (Profile.AtLeast(5, 11)); otherwise
// epoll_wait with the timeout rounded up to whole milliseconds, so it never
// wakes early. A Wait with a positive timeout returns before it only for a
// completion or a Wake. Wake writes an eventfd, which is registered
// edge-triggered and never read: every write raises an edge.
//
// # System calls
//
// The socket calls are raw wrappers (no Sockaddr decoding, no allocation,
// errno as a value). Those that cannot block (non-blocking socket calls,
// epoll_wait with a zero timeout) use RawSyscall6, skipping the scheduler's
// entersyscall/exitsyscall hand-off that would otherwise be paid on every
// op; only a wait that may block goes through Syscall6, so the runtime can
// run other goroutines meanwhile.
//
// # Files
//
// One file per op family holds its method, what Wait does for it and, for
// receives and sends, its batched form: accept.go, recv.go, send.go,
// connect.go, poll.go, cancel.go, closefd.go; interest.go registers fds and
// records readiness, timeout.go and wake.go are how Wait ends, wait.go runs
// the phases, batch.go hands receives and sends to a Batch.
//
// # Ownership
//
// fds used with the driver must be closed through CloseFD while they have
// armed ops; an fd whose ops all ended (or were cancelled) may be closed by
// its owner directly, even before the next Wait: an op armed on an fd that
// had none while still registered costs one EPOLL_CTL_MOD, which proves the
// number still names the registered file (else the fd is added afresh).
package epoll
