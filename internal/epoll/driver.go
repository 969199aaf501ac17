package epoll

import (
	"fmt"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/ringloop/ringloop/internal/driver"
	"github.com/ringloop/ringloop/internal/park"
	"golang.org/x/sys/unix"
)

// The epoll_wait event array starts at Netty's SelectedSelectionKeySet size
// and doubles, up to maxEvents, whenever a wait fills it.
const (
	initialEvents = 1024
	maxEvents     = 64 << 10
)

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

// probe decides the wait call and gathers each op family's reason: the
// Batch's for receives and sends in the batched form.
func (d *Driver) probe() driver.Features {
	f := driver.Features{Backend: d.Name(), Profile: d.cfg.Profile}
	f.Reasons = append(f.Reasons, d.probeTimeout(&f), interestReason)
	if d.batch != nil {
		f.Reasons = append(f.Reasons, d.batch.Reasons()...)
	} else {
		f.Reasons = append(f.Reasons, d.recvReason(), sendReason)
	}
	f.Reasons = append(f.Reasons, acceptReason, d.wakeReason())
	return f
}

func errnoName(e unix.Errno) string {
	if n := unix.ErrnoName(e); n != "" {
		return n
	}
	return e.Error()
}

// Name returns driver.NameEpoll, or the name of the driver the Batch makes.
func (d *Driver) Name() string {
	if d.batch != nil {
		return d.batch.Backend()
	}
	return driver.NameEpoll
}

// Features reports the backend, the profile and the wait call in use.
func (d *Driver) Features() driver.Features {
	f := d.features
	f.Reasons = append([]string(nil), f.Reasons...)
	return f
}

// Close releases the epoll set and the eventfd; armed ops are dropped
// without completions. The fds the ops used stay open: they belong to the
// caller, except one handed to CloseFD and not yet closed, which is closed
// now (the caller gave it up and will not close it again).
func (d *Driver) Close() error {
	if d.closed.Swap(true) {
		return driver.ErrClosed
	}
	for d.wakers.Load() != 0 {
		runtime.Gosched()
	}
	// Drop every armed op; a callback that closed the driver returns into
	// loops that stop once their op's flag is gone.
	for fd, st := range d.fds {
		if st != nil {
			if st.flags&fClosing != 0 {
				_ = unix.Close(fd)
			}
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
