//go:build linux && cgo && !ringloop_nouring

package uring

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/ringloop/ringloop/internal/driver"
	"github.com/ringloop/ringloop/internal/liburing"
	"golang.org/x/sys/unix"
)

// Driver is the io_uring implementation of driver.Driver. Like every driver
// it belongs to one loop goroutine; only Wake (and MsgRing's target) may be
// touched from others.
type Driver struct {
	cfg     driver.Config
	feat    driver.Features
	profile driver.Profile

	ring       *liburing.Ring
	ringFD     atomic.Int32 // read by other loops' MsgRing
	setupFlags uint32
	entries    uint32
	cqEntries  uint32

	batch *liburing.Batch
	sq    []liburing.SQE // the SQEs of the next Run, C memory
	nsq   int
	rets  []uint16 // buffer ids to hand back to the buffer ring, C memory
	nret  int
	cqes  []liburing.CQE // completion out array, C memory
	// cqes[cqHead:cqTail] are reaped but not handled yet (see handleCQEs).
	cqHead, cqTail int

	// How receives run on this kernel (after the profile's mask); the other
	// families' choices are flags of feat.
	recv recvMode

	ops    opTable
	synth  []synthEntry // final completions made by the driver itself
	parked []opRef      // receives waiting for a free buffer

	bufs  bufPool
	dgram dgramPool

	misc    []byte // mmapped page: eventfd read target
	wakeMu  sync.RWMutex
	wakeFD  int
	wakeArm bool // the eventfd read is in the kernel

	enabled    atomic.Bool
	closed     atomic.Bool
	inWait     bool // a Wait is running (Close from a callback is deferred)
	closeLater bool
	tid        int

	comp  driver.Completion
	stats Stats
}

// Stats counts what the driver did; loggable, and used by benchmarks. The
// shim's counters (io_uring_enter calls, SQEs, CQEs, overflow flushes,
// EINTR retries, silent completions) are its embedded liburing.Stats.
type Stats struct {
	liburing.Stats
	Runs          uint64 // cgo calls into the shim
	NoBufs        uint64 // receives parked without a free buffer (ENOBUFS)
	MsgRingFailed uint64 // MSG_RING sends the kernel refused
}

// Defaults for a zero Config.
const (
	defaultEntries     = 256
	defaultBufferSize  = 16 << 10
	defaultBufferCount = 256
	maxBufferCount     = 32768
)

// errParkedRing: a ring's completion work runs on the thread that submitted
// the request, which a parked goroutine has usually left, so a parked loop
// on a plain ring cost more CPU per request than NewBatched (package doc);
// the plain-ring parked mode was removed.
var errParkedRing = errors.New("uring: New builds a locked loop's ring; a parked loop runs NewBatched")

// New creates the io_uring driver of a locked loop. It may be called on any
// goroutine: the ring starts disabled (IORING_SETUP_R_DISABLED) and is
// enabled by Enable, or by the first Wait, on the loop's locked OS thread,
// which then becomes the ring's only submitter (SINGLE_ISSUER). When
// io_uring cannot be used the error wraps driver.ErrUringUnavailable and
// says why. A parked loop (driver.Config.Parked) runs NewBatched instead:
// New refuses it.
func New(cfg driver.Config) (*Driver, error) {
	if cfg.Parked {
		return nil, errParkedRing
	}
	d := &Driver{cfg: cfg, profile: cfg.Profile, wakeFD: -1}
	if d.profile == "" {
		d.profile = driver.Native
	}
	if err := d.open(); err != nil {
		d.release()
		return nil, err
	}
	return d, nil
}

// open builds everything: ring, features, buffers, eventfd, batch.
func (d *Driver) open() error {
	var err error
	if err = d.setup(); err != nil {
		return err
	}
	d.ops.init()
	d.batch = liburing.NewBatch(1024, d.bufs.count, driver.DefaultWaitBatch)
	d.sq = d.batch.SQEs()
	d.rets = d.batch.Returns()
	d.cqes = d.batch.CQEs()
	d.synth = make([]synthEntry, 0, 64)
	d.parked = make([]opRef, 0, 64)
	if d.misc, err = mmap(unix.Getpagesize()); err != nil {
		return err
	}
	fd, err := unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
	if err != nil {
		return fmt.Errorf("uring: eventfd: %w", err)
	}
	d.wakeFD = fd
	if err = d.bufs.start(d); err != nil {
		return err
	}
	d.armWake()
	return nil
}

// Name reports driver.NameURing.
func (d *Driver) Name() string { return driver.NameURing }

// Features reports what the driver does on this kernel and why.
func (d *Driver) Features() driver.Features { return d.feat }

// Stats reports the driver's counters (no system call, no allocation).
func (d *Driver) Stats() Stats {
	s := d.stats
	if d.ring != nil {
		s.Stats = d.ring.Stats()
	}
	return s
}

// Enable starts the ring on the calling OS thread. The engine calls it from
// its locked loop thread before the first Wait (Wait calls it otherwise).
// With SINGLE_ISSUER|DEFER_TASKRUN every later Wait and Close must run on
// this same thread: lock the goroutine with runtime.LockOSThread.
func (d *Driver) Enable() error {
	if d.closed.Load() {
		return driver.ErrClosed
	}
	if d.enabled.Load() {
		return nil
	}
	if d.setupFlags&liburing.SetupRDisabled != 0 {
		if err := d.ring.Enable(); err != nil {
			return fmt.Errorf("uring: enable ring: %w", err)
		}
	}
	d.tid = unix.Gettid()
	d.enabled.Store(true)
	return nil
}

// push returns the next SQE slot, zeroed, growing the batch at a new
// high-water mark.
func (d *Driver) push() *liburing.SQE {
	if d.nsq == len(d.sq) {
		d.batch.GrowSQEs(2 * len(d.sq))
		d.sq = d.batch.SQEs()
	}
	q := &d.sq[d.nsq]
	d.nsq++
	*q = liburing.SQE{}
	return q
}

func ptr(b []byte) unsafe.Pointer { return unsafe.Pointer(&b[0]) }

// mmap allocates zeroed memory outside the Go heap.
func mmap(n int) ([]byte, error) {
	b, err := unix.Mmap(-1, 0, n, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return nil, fmt.Errorf("uring: mmap %d bytes: %w", n, err)
	}
	return b, nil
}
