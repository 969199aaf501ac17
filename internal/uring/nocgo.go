//go:build !linux || !cgo || ringloop_nouring

package uring

import (
	"fmt"
	"time"

	"github.com/ringloop/ringloop/internal/driver"
	"golang.org/x/sys/unix"
)

// Driver is the io_uring driver; built without liburing (cgo off, or the
// ringloop_nouring build tag) it is a stub whose New always fails, so the
// engine falls back to epoll.
type Driver struct{}

// Stats counts what the driver did (see the liburing build).
type Stats struct {
	Enters, Runs, Submitted, Completions, SQFull, Overflow, EINTR uint64
	Silent, SilentErr, NoBufs, MsgRingFailed                      uint64
}

// New reports that io_uring is unavailable in this build, and why.
func New(cfg driver.Config) (*Driver, error) {
	return nil, fmt.Errorf("%w: %s", driver.ErrUringUnavailable, unbuilt)
}

// Name reports driver.NameURing.
func (d *Driver) Name() string { return driver.NameURing }

// Accept does nothing without liburing.
func (d *Driver) Accept(fd int, t driver.Tag) {}

// Recv does nothing without liburing.
func (d *Driver) Recv(fd int, t driver.Tag) {}

// Send does nothing without liburing.
func (d *Driver) Send(fd int, t driver.Tag, p []byte) {}

// Connect does nothing without liburing.
func (d *Driver) Connect(fd int, t driver.Tag, sa unix.Sockaddr) {}

// Poll does nothing without liburing.
func (d *Driver) Poll(fd int, t driver.Tag, events uint32) {}

// Cancel does nothing without liburing.
func (d *Driver) Cancel(fd int, t driver.Tag) {}

// CancelAll does nothing without liburing.
func (d *Driver) CancelAll(fd int) {}

// CloseFD does nothing without liburing.
func (d *Driver) CloseFD(fd int, t driver.Tag) {}

// Nop does nothing without liburing.
func (d *Driver) Nop(t driver.Tag) {}

// Wait reports driver.ErrClosed: there is no ring in this build.
func (d *Driver) Wait(timeout time.Duration, fn func(*driver.Completion)) (int, error) {
	return 0, driver.ErrClosed
}

// Wake reports driver.ErrClosed.
func (d *Driver) Wake() error { return driver.ErrClosed }

// Enable reports driver.ErrClosed.
func (d *Driver) Enable() error { return driver.ErrClosed }

// MsgRing reports driver.ErrClosed.
func (d *Driver) MsgRing(target *Driver, t driver.Tag, res int32) error { return driver.ErrClosed }

// Features reports the backend name only.
func (d *Driver) Features() driver.Features {
	return driver.Features{Backend: driver.NameURing, Reasons: []string{unbuilt}}
}

// Stats reports nothing.
func (d *Driver) Stats() Stats { return Stats{} }

// LiveOps reports none.
func (d *Driver) LiveOps() int { return 0 }

// Close does nothing.
func (d *Driver) Close() error { return nil }

var _ driver.Driver = (*Driver)(nil)

// NewBatched reports that io_uring is unavailable in this build, and why.
func NewBatched(cfg driver.Config) (driver.Driver, error) {
	return nil, fmt.Errorf("%w: %s", driver.ErrUringUnavailable, unbuilt)
}
