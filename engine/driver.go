package engine

import (
	"fmt"

	"github.com/ringloop/ringloop/internal/driver"
)

// The driver contract (ops, tags, completions, the optional capabilities and
// the kernel profiles' rules) is package internal/driver: no user can supply
// a driver, and a private contract lets an op be added without breaking
// anyone. What a user sees of a driver is named here.

// Features is what a loop's driver does on this kernel and why: the
// io_uring setup flags and ops it uses, epoll's wait call, the kernel
// profile in force (Profile) and one line per choice (Reasons). A loop
// reports it in BackendInfo.Features; String renders it on one line.
type Features = driver.Features

// ErrUringUnavailable is wrapped by New's error when io_uring was asked for
// (WithBackend(BackendUring), RINGLOOP_BACKEND=io_uring) and cannot be used
// here; the error says why (errno and its meaning, missing ops, no cgo).
var ErrUringUnavailable = driver.ErrUringUnavailable

// DriverConfig sets up a loop's driver (WithDriverConfig); a zero field
// picks the default.
type DriverConfig struct {
	// Profile masks the kernel's features to those of an older kernel
	// ("5.10", "5.15", "5.19", "6.1"), so a program runs as it would
	// there; "native" applies no mask (default: RINGLOOP_KERNEL_PROFILE,
	// else native). BackendInfo.Features.Profile reports the one in force.
	Profile string
	// Entries is io_uring's submission queue size, rounded up to a power of
	// two (default 256); the completion queue is twice as large unless
	// CQEntries says otherwise.
	Entries   uint32
	CQEntries uint32
	// BufferSize and BufferCount size the receive buffers the driver owns
	// (defaults 16 KiB and 256; epoll uses BufferSize only).
	BufferSize  int
	BufferCount int
}

// check refuses sizes no driver can use.
func (dc DriverConfig) check() error {
	if dc.BufferSize < 0 || dc.BufferCount < 0 {
		return fmt.Errorf("engine: driver buffers %d x %d bytes (expected >= 0; 0 = default)", dc.BufferCount, dc.BufferSize)
	}
	return nil
}
