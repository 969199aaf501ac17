// Package driver is the contract between a loop and an I/O backend.
//
// It is internal: no user can supply a driver, so the contract can grow (a
// new op, a new capability) without a breaking change. What users see of a
// driver, engine names: engine.Features, engine.DriverConfig (its Profile),
// engine.ErrUringUnavailable.
//
// The engine is written once, in completion terms; each backend delivers
// completions. The io_uring driver (package uring) maps ops onto SQEs and CQEs;
// the epoll driver (package epoll) performs the non-blocking system call
// when the fd becomes ready and reports its result as a completion; its
// batched form with io_uring (NameEpollURing) takes readiness from epoll and
// hands the receives and sends of each Wait to the ring at once. The engine
// cannot tell which one runs, except through Name and Features.
//
// # Rules every driver keeps
//
//   - A Driver is used by one goroutine (its loop) only, except Wake, which any
//     goroutine may call. Unless Config.Parked is set, that goroutine is
//     locked to one OS thread.
//   - Ops are prepared by the method calls and handed to the kernel at the next
//     Wait, so one system call carries every op of a loop iteration.
//   - Every armed op ends with exactly one final completion (More == false):
//     its natural result, an error, or -ECANCELED after Cancel. Multishot ops
//     (Accept, Recv, Poll) report intermediate completions with More == true.
//     After the final completion the driver never reports that tag again, so
//     the engine may recycle the tag's slot.
//   - Cancel of an op that has already ended is a no-op and reports nothing.
//     Cancel itself reports nothing; the cancelled op reports -ECANCELED.
//   - At most one op of each kind is armed per fd at a time (one Recv, one
//     Send, one Accept, one Poll, one Connect); sends on an fd are issued one
//     after another, each after the previous one's completion. The engine
//     keeps to this; a driver may refuse a second op with -EBUSY.
//   - Poll's ready mask may include POLLERR and POLLHUP even when not asked.
//   - Tags with the high bit set (Reserved) belong to the driver; the engine
//     never uses them.
//   - Data in a Completion points into memory the driver owns; it is valid only
//     until the callback passed to Wait returns.
//   - Memory the kernel uses after a call returns (send buffers, receive
//     buffers, sockaddrs) is kept outside the Go heap or pinned until its
//     completion.
package driver

import (
	"errors"
	"time"

	"golang.org/x/sys/unix"
)

// Tag identifies one op. It is opaque to drivers: the engine packs a slot
// index, a generation and the op kind into it, so that a completion for an op
// that was cancelled or closed can never reach a new owner of the slot.
type Tag uint64

// Reserved marks tags a driver uses for its own ops (wakeups, cancels,
// timeouts, buffer provisioning). The engine never submits such tags.
const Reserved Tag = 1 << 63

// Completion is the result of one op.
type Completion struct {
	Tag Tag
	// Res is the number of bytes (Recv, Send), a new fd (Accept), the ready
	// events (Poll), 0 (Connect, Close) or a negated errno.
	Res int32
	// More is true while a multishot op stays armed; the final completion of
	// every op has More == false.
	More bool
	// Data holds the received bytes of a Recv completion. It is valid only
	// until the callback passed to Wait returns: copy what you keep.
	Data []byte
	// Msg describes a RecvMsg completion's datagram (MsgReceiver); nil
	// for every other op. Valid as long as Data.
	Msg *Msg
}

// Err returns the completion's error, nil when Res is not negative.
func (c *Completion) Err() error {
	if c.Res >= 0 {
		return nil
	}
	return unix.Errno(-c.Res)
}

// The drivers' names, as Driver.Name and Features.Backend give them.
const (
	// NameURing is the io_uring driver on its completion ring (uring.New):
	// a locked loop's.
	NameURing = "io_uring"
	// NameEpoll is the epoll driver (epoll.New).
	NameEpoll = "epoll"
	// NameEpollURing is the epoll driver's batched form with io_uring doing
	// the batch (uring.NewBatched): readiness from epoll, the receives and
	// sends of the ready fds as one io_uring_enter per Wait. A parked loop
	// on io_uring runs it.
	NameEpollURing = "epoll+io_uring"
)

// Driver is an I/O backend driven by one loop.
type Driver interface {
	// Name is NameURing, NameEpoll or NameEpollURing.
	Name() string

	// Accept keeps accepting connections on the listening socket fd until
	// cancelled; each completion's Res is a new non-blocking, close-on-exec fd.
	Accept(fd int, t Tag)
	// Recv keeps receiving from fd until cancelled, EOF (Res == 0, final) or an
	// error (final). Each completion carries the bytes in Data.
	Recv(fd int, t Tag)
	// Send writes all of p to fd, continuing after partial writes, and reports
	// the total written (len(p)) or the error. p must stay untouched until the
	// completion.
	Send(fd int, t Tag, p []byte)
	// Connect connects the non-blocking socket fd to sa; Res is 0 or -errno.
	Connect(fd int, t Tag, sa unix.Sockaddr)
	// Poll keeps reporting readiness of fd for events (unix.POLLIN,
	// unix.POLLOUT, ...) until cancelled; Res is the ready event mask.
	Poll(fd int, t Tag, events uint32)
	// Cancel ends the op t on fd; it reports -ECANCELED unless it had already
	// ended.
	Cancel(fd int, t Tag)
	// CloseFD closes fd and reports close(2)'s result under t. The caller
	// cancels the fd's ops first and waits for their final completions before
	// it reuses their tags' slots.
	CloseFD(fd int, t Tag)

	// Wait hands every prepared op to the kernel, waits up to timeout for at
	// least one completion (0: do not block; negative: until a completion or a
	// Wake) and calls fn for each completion, in order. It returns the number
	// of completions. EINTR is retried inside; it never surfaces.
	Wait(timeout time.Duration, fn func(*Completion)) (int, error)
	// Wake makes a blocked or the next Wait return. Safe from any goroutine.
	// Callers coalesce wakes (the loop's wake flag); a driver need not.
	Wake() error
	// Features reports what the backend does and why.
	Features() Features
	// Close releases everything: ring or epoll fd, eventfd, buffers, mmaps.
	// Ops still armed are dropped without completions.
	Close() error
}

// Config carries the settings a driver is built with.
type Config struct {
	// Profile masks the kernel's features to those of an older kernel.
	Profile Profile
	// Entries is the submission queue size (a power of two); 0 picks the
	// default (256). The completion queue is twice as large unless CQEntries
	// says otherwise.
	Entries   uint32
	CQEntries uint32
	// BufferSize and BufferCount size the receive buffers the driver owns;
	// 0 picks the defaults (16 KiB, 256).
	BufferSize  int
	BufferCount int
	// Parked says the loop goroutine is not locked to an OS thread: Wait,
	// Enable and every op may run on any thread, and the loop sleeps in Go's
	// netpoller on the driver's fd (park.Waiter). On io_uring such a loop
	// runs NameEpollURing (uring.NewBatched); uring.New refuses it.
	Parked bool
}

// Errors shared by both drivers.
var (
	// ErrUringUnavailable says io_uring cannot be used here; the wrapped
	// error says why (errno and its meaning, missing ops, no cgo).
	ErrUringUnavailable = errors.New("io_uring unavailable")
	// ErrClosed is returned by a driver used after Close.
	ErrClosed = errors.New("driver closed")
)

// DefaultWaitBatch is how many completions one Wait hands over at most.
const DefaultWaitBatch = 1024

// Timeout helper values for Wait.
const (
	NoWait      time.Duration = 0
	WaitForever time.Duration = -1
)
