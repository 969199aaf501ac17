package epoll

import (
	"github.com/ringloop/ringloop/internal/driver"
)

// Batch performs the receives and sends of ready fds for a driver made by
// NewBatched. The driver queues them while a Wait runs (sends in its
// submission phase, receives as it goes through the ready fds) and calls
// Flush once, at the end of the Wait: io_uring's batch hands them all to
// the kernel in one io_uring_enter, where, issued with MSG_DONTWAIT, each
// completes inline or fails with EAGAIN (which clears the fd's readiness,
// as a failed recv(2) would). Readiness, registration, accepts, connects,
// closes and polls stay the driver's, as in the plain form.
type Batch interface {
	// Recv queues a receive on fd into a buffer of the batch; false: no
	// buffer is free until the next Flush.
	Recv(fd int, key uint64) bool
	// Send queues a send of p on fd (p is untouched until its result).
	Send(fd int, p []byte, key uint64)
	// Queued reports ops waiting for Flush.
	Queued() bool
	// Flush hands every queued op to the kernel and collects all their
	// results for Next: each op gets exactly one, -errno when it could not
	// be performed. The driver consumes every result before the next Flush.
	Flush()
	// Next hands out the next result of the last Flush, consumed before it
	// returns (a callback that never returns cannot see it twice). data is
	// a receive's bytes, valid until the next Flush. ok is false when none
	// is left.
	Next() (key uint64, res int32, data []byte, ok bool)
	// Backend names the driver the batch makes, for Name and Features
	// (driver.NameEpollURing).
	Backend() string
	// Reasons says how receives and sends run, for Features.
	Reasons() []string
	// Close releases the batch; queued ops are dropped.
	Close() error
}

// A batch key is the fd and what was asked of it.
const (
	keyRecv uint64 = 0
	keySend uint64 = 1
)

func batchKey(fd int, kind uint64) uint64 { return uint64(fd)<<1 | kind }

// NewBatched is New with the receives and sends of ready fds performed by
// b, which the driver closes with itself.
func NewBatched(cfg driver.Config, b Batch) (*Driver, error) {
	d, err := New(cfg)
	if err != nil {
		b.Close()
		return nil, err
	}
	d.batch = b
	d.features = d.probe()
	return d, nil
}

// flushBatch performs the queued ops and hands out their results.
func (d *Driver) flushBatch() {
	if d.batch.Queued() {
		d.batch.Flush()
	}
	d.batchResults()
}

// batchResults acts on each result as recvLoop and flushSends act on a
// system call's, updating the fd's state before its callback runs.
func (d *Driver) batchResults() {
	for !d.closed.Load() {
		key, res, data, ok := d.batch.Next()
		if !ok {
			return
		}
		fd := int(key >> 1)
		st := d.lookup(fd)
		if st == nil {
			continue
		}
		if key&1 == keySend {
			d.sendResult(fd, st, res)
		} else {
			d.recvResult(fd, st, res, data)
		}
	}
}
