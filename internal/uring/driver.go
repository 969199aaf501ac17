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
	sq    []liburing.Op // batch descriptors, C memory
	nsq   int
	rets  []uint16 // buffer ids to hand back to the buffer ring, C memory
	nret  int
	cqes  []liburing.CQE // completion out array, C memory
	// cqes[cqHead:cqTail] are reaped but not handled yet (see handleCQEs).
	cqHead, cqTail int

	// How each op kind runs on this kernel (after the profile's mask).
	acceptMulti bool
	pollMulti   bool
	recv        recvMode

	ops    opTable
	synth  []synthEntry // final completions made by the driver itself
	parked []opRef      // receives waiting for a free buffer

	bufs bufPool

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

// Stats counts what the driver did; loggable, and used by benchmarks.
type Stats struct {
	Enters        uint64 // io_uring_enter system calls
	Runs          uint64 // cgo calls into the shim
	Submitted     uint64 // SQEs handed to the kernel
	Completions   uint64 // CQEs reaped (including the driver's own)
	SQFull        uint64 // early submissions because the SQ was full
	Overflow      uint64 // CQ overflow flushes
	EINTR         uint64 // interrupted waits retried
	Silent        uint64 // cancel and buffer completions dropped in the shim
	SilentErr     uint64 // ... that failed (buffer provisioning should not)
	NoBufs        uint64 // receives parked without a free buffer (ENOBUFS)
	MsgRingFailed uint64 // MSG_RING sends the kernel refused
}

// recvMode is how Recv runs.
type recvMode uint8

const (
	recvMultiRing  recvMode = iota // multishot recv, registered buffer ring (6.0)
	recvSingleRing                 // re-armed recv, buffer select from a buffer ring (5.19)
	recvPolled                     // readiness poll, then a MSG_DONTWAIT recv into a buffer the driver picks (before 5.19)
	recvPlain                      // re-armed recv into a per-op buffer
)

// Defaults for a zero Config.
const (
	defaultEntries     = 256
	defaultBufferSize  = 16 << 10
	defaultBufferCount = 256
	maxBufferCount     = 32768
)

// user_data layout. Everything the driver submits has the high bit
// (driver.Reserved) set; a CQE without it was posted by another ring's
// MSG_RING and carries an engine tag. Ops carry opBit, a 30-bit generation
// and a 32-bit slot index; the driver's own requests use fixed values, and
// cancels are silent (the shim drops their
// completions, so they never wake a blocked Wait).
const (
	udReserved = uint64(driver.Reserved)
	udOpBit    = uint64(1) << 62
	udGenMask  = uint64(1)<<30 - 1
	udWake     = udReserved | 1
	udCancel   = liburing.SilentUserData | 2 // consumed by the shim
)

var wakeOne = [8]byte{1}

// errParkedRing: a ring's completion work runs on the thread that submitted
// the request, which a parked goroutine has usually left, so a parked loop
// on a plain ring paid 1.2-1.6x the CPU per request of NewReady (package
// doc); the plain-ring parked mode was removed.
var errParkedRing = errors.New("uring: New builds a locked loop's ring; a parked loop runs NewReady")

// New creates the io_uring driver of a locked loop. It may be called on any
// goroutine: the ring starts disabled (IORING_SETUP_R_DISABLED) and is
// enabled by Enable, or by the first Wait, on the loop's locked OS thread,
// which then becomes the ring's only submitter (SINGLE_ISSUER). When
// io_uring cannot be used the error wraps driver.ErrUringUnavailable and
// says why. A parked loop (driver.Config.Parked) runs NewReady instead: New
// refuses it.
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
	d.sq = d.batch.Ops()
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

// Name reports "io_uring".
func (d *Driver) Name() string { return "io_uring" }

// Features reports what the driver does on this kernel and why.
func (d *Driver) Features() driver.Features { return d.feat }

// Stats reports the driver's counters (no system call, no allocation).
func (d *Driver) Stats() Stats {
	s := d.stats
	if d.ring != nil {
		rs := d.ring.Stats()
		s.Enters += rs.Enters
		s.Submitted += rs.Submitted
		s.Completions += rs.Completions
		s.SQFull += rs.SQFull
		s.Overflow += rs.Overflow
		s.EINTR += rs.EINTR
		s.Silent += rs.Silent
		s.SilentErr += rs.SilentErr
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

// Wake makes a blocked or the next Wait return: it bumps the eventfd that a
// read in the ring is always waiting on. Safe from any goroutine.
func (d *Driver) Wake() error {
	d.wakeMu.RLock()
	defer d.wakeMu.RUnlock()
	if d.wakeFD < 0 {
		return driver.ErrClosed
	}
	for {
		_, err := unix.Write(d.wakeFD, wakeOne[:])
		switch err {
		case nil, unix.EAGAIN: // EAGAIN: the counter is saturated, a wake is pending anyway
			return nil
		case unix.EINTR:
			continue
		}
		return fmt.Errorf("uring: wake: %w", err)
	}
}

// armWake queues the eventfd read that Wake completes.
func (d *Driver) armWake() {
	q := d.push()
	q.Opcode = liburing.OpRead
	q.FD = int32(d.wakeFD)
	q.Addr = uint64(uintptr(unsafe.Pointer(&d.misc[0])))
	q.Len = 8
	q.UserData = udWake
	d.wakeArm = true
}

// MsgRing posts a completion {Tag: t, Res: res} on target's ring with
// IORING_OP_MSG_RING (5.18), for loop-to-loop handoff without an eventfd:
// target's Wait reports it like any other completion (driver.Messenger).
// The message is sent with this driver's next Wait (call it from this
// driver's loop); this driver then reports {Tag: done, Res: 0} once it is
// posted, or the errno the kernel refused it with, so that what the message
// carried (an fd) is never lost. It fails at once with
// errors.ErrUnsupported when the kernel or profile lacks MSG_RING, and when
// target is not an io_uring driver, not started or closed; the caller then
// uses a task ring and Wake instead. The engine keeps t and done unique as
// for any op. Target's ring fd is read now: target must not close
// its ring until the done completion.
func (d *Driver) MsgRing(to driver.Driver, t driver.Tag, res int32, done driver.Tag) error {
	target, _ := to.(*Driver)
	switch {
	case d.closed.Load():
		return driver.ErrClosed
	case !d.feat.MsgRing:
		return fmt.Errorf("uring: MSG_RING needs kernel 5.18 (profile %s): %w", d.profile, errors.ErrUnsupported)
	case t&driver.Reserved != 0:
		return fmt.Errorf("uring: MSG_RING tag %#x uses the reserved bit", uint64(t))
	case target == nil:
		return fmt.Errorf("uring: MSG_RING target is a %s driver: %w", to.Name(), errors.ErrUnsupported)
	case target.closed.Load():
		return fmt.Errorf("uring: MSG_RING target: %w", driver.ErrClosed)
	case !target.enabled.Load():
		return errors.New("uring: MSG_RING target ring not enabled yet (its loop has not started)")
	}
	idx, o := d.ops.alloc(kindMsgRing, -1, done)
	q := d.push()
	q.Opcode = liburing.OpMsgRing
	q.FD = target.ringFD.Load()
	q.Len = uint32(res)
	q.Off = uint64(t)
	q.UserData = ud(idx, o.gen)
	return nil
}

// push returns the next descriptor slot, zeroed, growing the batch at a
// new high-water mark.
func (d *Driver) push() *liburing.Op {
	if d.nsq == len(d.sq) {
		d.batch.GrowOps(2 * len(d.sq))
		d.sq = d.batch.Ops()
	}
	q := &d.sq[d.nsq]
	d.nsq++
	*q = liburing.Op{}
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
