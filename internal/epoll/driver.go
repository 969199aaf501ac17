package epoll

import (
	"encoding/binary"
	"fmt"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/ringloop/ringloop/internal/driver"
	"github.com/ringloop/ringloop/internal/park"
	"golang.org/x/sys/unix"
)

// ReadBudget is how many reads one armed receive may make per Wait before
// the driver moves on to other fds (Netty's maxMessagesPerRead); the fd is
// resumed at the next Wait.
const ReadBudget = 16

// AcceptBudget is how many connections one armed accept may take per Wait
// before the driver moves on; the listener is resumed at the next Wait.
const AcceptBudget = 64

// DefaultBufferSize is the size of the loop-owned receive buffer (the most
// one read takes) when Config.BufferSize is 0.
const DefaultBufferSize = 16 << 10

// The epoll_wait event array starts at Netty's SelectedSelectionKeySet size
// and doubles, up to maxEvents, whenever a wait fills it.
const (
	initialEvents = 1024
	maxEvents     = 64 << 10
)

// The interest every registered fd has, for its whole registration (plus
// EPOLLPRI while a poll asks for it).
const interest = unix.EPOLLIN | unix.EPOLLOUT | unix.EPOLLRDHUP | unix.EPOLLET

// wakeMark is the event data of the eventfd (no user fd is negative).
const wakeMark = -1

// wakeVal is the 8-byte value one Wake writes to the eventfd.
var wakeVal = func() (b [8]byte) {
	binary.NativeEndian.PutUint64(b[:], 1)
	return
}()

// Driver is the epoll driver. Its methods follow driver.Driver: one loop
// goroutine uses it, except Wake.
type Driver struct {
	cfg      driver.Config
	epfd     int
	efd      int
	closed   atomic.Bool
	wakers   atomic.Int32
	pwait2   bool
	features driver.Features

	fds     []*fdState
	subq    []int32 // fds with prepared ops for the next submission phase
	runq    []int32 // fds with readiness to act on
	runq2   []int32
	running []int32 // the run process is working through, from runAt
	runAt   int
	pending []driver.Completion // final completions waiting for a callback
	pendAt  int
	events  []unix.EpollEvent
	buf     []byte

	fn         func(*driver.Completion) // set while Wait hands out completions
	comp       driver.Completion
	count      int
	polledLast bool
	full       bool // the last epoll_wait filled the event array
	ts         unix.Timespec

	park   *park.Waiter // parked loops (Config.Parked) sleep on epfd in Go's netpoller
	parkFn func(*driver.Completion)
	// between is the loop's work between completion batches while a park
	// goes on (WaitResume), resuming says it runs; collected says epoll_wait
	// ran in this parkPoll.
	between   func() (time.Duration, bool)
	resuming  bool
	collected bool
	// rawWaits counts a parked loop's Waits blocked in epoll_wait instead
	// (one called from a completion callback, while the Waiter is busy):
	// only those need Wake's eventfd write.
	rawWaits atomic.Int32

	batch Batch // performs receives and sends (NewBatched); nil: the driver does
}

var _ driver.Driver = (*Driver)(nil)

// New creates an epoll set and a wake eventfd and probes epoll_pwait2.
func New(cfg driver.Config) (*Driver, error) {
	if cfg.Profile == "" {
		cfg.Profile = driver.Native
	}
	if cfg.BufferSize <= 0 {
		cfg.BufferSize = DefaultBufferSize
	}
	epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("epoll: epoll_create1: %w", err)
	}
	efd, err := unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
	if err != nil {
		unix.Close(epfd)
		return nil, fmt.Errorf("epoll: eventfd: %w", err)
	}
	d := &Driver{
		cfg:    cfg,
		epfd:   epfd,
		efd:    efd,
		events: make([]unix.EpollEvent, initialEvents),
		buf:    make([]byte, cfg.BufferSize),
	}
	d.park = park.New(d.parkPoll)
	if err := d.addWake(epfd); err != nil {
		unix.Close(efd)
		unix.Close(epfd)
		return nil, fmt.Errorf("epoll: add eventfd: %w", err)
	}
	if err := d.usePark(epfd); err != nil {
		unix.Close(efd)
		unix.Close(epfd)
		return nil, err
	}
	d.features = d.probe()
	return d, nil
}

// usePark registers the epoll fd with the netpoller of a parked loop, now
// rather than at its first Wait (see park.Waiter.Use).
func (d *Driver) usePark(epfd int) error {
	if !d.cfg.Parked {
		return nil
	}
	if err := d.park.Use(epfd); err != nil {
		return fmt.Errorf("epoll: %w", err)
	}
	return nil
}

func (d *Driver) addWake(epfd int) error {
	ev := unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLET, Fd: wakeMark}
	return unix.EpollCtl(epfd, unix.EPOLL_CTL_ADD, d.efd, &ev)
}

// probe decides the wait call and records the reasons.
func (d *Driver) probe() driver.Features {
	f := driver.Features{Backend: d.Name(), Profile: d.cfg.Profile}
	switch {
	case !d.cfg.Profile.AtLeast(5, 11):
		f.Reasons = append(f.Reasons, fmt.Sprintf("wait: epoll_wait, timeouts rounded up to whole ms (profile %s predates epoll_pwait2, 5.11)", d.cfg.Profile))
	default:
		if errno := d.pwait2Probe(); errno != 0 {
			f.Reasons = append(f.Reasons, fmt.Sprintf("wait: epoll_wait, timeouts rounded up to whole ms (epoll_pwait2: %s)", errnoName(errno)))
		} else {
			d.pwait2 = true
			f.EpollPwait2 = true
			f.Reasons = append(f.Reasons, "wait: epoll_pwait2, nanosecond timeouts")
		}
	}
	f.Reasons = append(f.Reasons,
		"interest: edge-triggered EPOLLIN|EPOLLOUT|EPOLLRDHUP, added once per fd, no epoll_ctl per op")
	if d.batch != nil {
		f.Reasons = append(f.Reasons, d.batch.Reasons()...)
	} else {
		f.Reasons = append(f.Reasons,
			fmt.Sprintf("recv: up to %d reads of %d B per fd per Wait, then the next fd (fairness)", ReadBudget, d.cfg.BufferSize),
			"send: tried in Wait's submission phase; EPOLLOUT edge continues partial sends")
	}
	f.Reasons = append(f.Reasons,
		fmt.Sprintf("accept: accept4 NONBLOCK|CLOEXEC, up to %d per listener per Wait", AcceptBudget))
	if d.cfg.Parked {
		f.Reasons = append(f.Reasons, "wake: a past read deadline on the parked epoll fd readies the loop goroutine with no system call (eventfd only for a Wait inside a callback)")
	} else {
		f.Reasons = append(f.Reasons, "wake: eventfd, edge-triggered, never read")
	}
	return f
}

// pwait2Probe calls epoll_pwait2 with a zero timeout and returns its errno.
func (d *Driver) pwait2Probe() unix.Errno {
	d.ts = unix.Timespec{}
	_, errno := epollPwait2Raw(d.epfd, d.events[:1], &d.ts)
	return errno
}

func errnoName(e unix.Errno) string {
	if n := unix.ErrnoName(e); n != "" {
		return n
	}
	return e.Error()
}

// Name returns "epoll", or the Batch's backend.
func (d *Driver) Name() string {
	if d.batch != nil {
		return d.batch.Backend()
	}
	return "epoll"
}

// Features reports the backend, the profile and the wait call in use.
func (d *Driver) Features() driver.Features {
	f := d.features
	f.Reasons = append([]string(nil), f.Reasons...)
	return f
}

// Wake makes a blocked or the next Wait return; safe from any goroutine.
func (d *Driver) Wake() error {
	d.wakers.Add(1)
	defer d.wakers.Add(-1)
	if d.closed.Load() {
		return driver.ErrClosed
	}
	d.park.Wake()
	if d.cfg.Parked && d.rawWaits.Load() == 0 {
		return nil // the Waiter ends a park by itself
	}
	for {
		_, err := unix.Write(d.efd, wakeVal[:])
		switch err {
		case nil, unix.EAGAIN: // EAGAIN: the counter is full, a wake is pending
			return nil
		case unix.EINTR:
			continue
		default:
			return fmt.Errorf("epoll: wake: %w", err)
		}
	}
}

// Close releases the epoll set and the eventfd; armed ops are dropped
// without completions. The fds the ops used stay open: they belong to the
// caller.
func (d *Driver) Close() error {
	if d.closed.Swap(true) {
		return driver.ErrClosed
	}
	for d.wakers.Load() != 0 {
		runtime.Gosched()
	}
	// Drop every armed op; a callback that closed the driver returns into
	// loops that stop once their op's flag is gone.
	for _, st := range d.fds {
		if st != nil {
			st.flags, st.sa, st.sends, st.sendAt = 0, nil, nil, 0
		}
	}
	d.subq, d.runq, d.pending, d.pendAt = nil, nil, nil, 0
	d.park.Close()
	if d.batch != nil {
		d.batch.Close()
	}
	err1 := unix.Close(d.epfd)
	err2 := unix.Close(d.efd)
	if err1 != nil {
		return fmt.Errorf("epoll: close epoll fd: %w", err1)
	}
	if err2 != nil {
		return fmt.Errorf("epoll: close eventfd: %w", err2)
	}
	return nil
}

func negErrno(err error) int32 {
	if e, ok := err.(unix.Errno); ok {
		return -int32(e)
	}
	return -int32(unix.EIO)
}
