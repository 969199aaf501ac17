package epoll

import (
	"github.com/ringloop/ringloop/internal/driver"
	"golang.org/x/sys/unix"
)

// Batch performs the receives and sends of ready fds for a driver made by
// NewBatched. The driver queues them while a Wait runs (sends in its
// submission phase, receives as it goes through the ready fds) and calls
// Flush once, at the end of the Wait: io_uring's variant hands them all to
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
	// Backend names the backend for Features ("io_uring").
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

// batchRecv queues the fd's receive, flushing a batch that has no buffer
// left first (its results are handled now, so the fd is checked again).
func (d *Driver) batchRecv(fd int, st *fdState) {
	if st.flags&fRecvBusy != 0 {
		return
	}
	key := batchKey(fd, keyRecv)
	if !d.batch.Recv(fd, key) {
		d.flushBatch()
		if st.flags&(fRecv|fReadyIn|fClosing|fRecvBusy) != fRecv|fReadyIn || d.closed.Load() || !d.batch.Recv(fd, key) {
			d.queueRun(fd, st)
			return
		}
	}
	st.flags |= fRecvBusy
}

// batchSend queues the fd's head send.
func (d *Driver) batchSend(fd int, st *fdState) {
	if st.flags&fSendBusy != 0 {
		return
	}
	op := &st.sends[st.sendAt]
	d.batch.Send(fd, op.p[op.off:], batchKey(fd, keySend))
	st.flags |= fSendBusy
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

func (d *Driver) recvResult(fd int, st *fdState, res int32, data []byte) {
	if st.flags&fRecvBusy == 0 {
		return // the op ended meanwhile (CloseFD, Rebuild)
	}
	st.flags &^= fRecvBusy
	t := st.recvTag
	if st.flags&fRecvCancel != 0 {
		// Bytes the kernel already took still arrive, then the cancel.
		st.flags &^= fRecv | fRecvCancel
		d.queueSub(fd, st)
		if res > 0 {
			d.emit(t, res, true, data)
		}
		d.post(t, ecanceled)
		return
	}
	switch {
	case res > 0:
		if int(res) < d.cfg.BufferSize && st.flags&fHup == 0 && d.isStream(fd, st) {
			st.flags &^= fReadyIn // a short read drained the queue
		} else {
			d.queueRun(fd, st)
		}
		d.emit(t, res, true, data)
	case res == -int32(unix.EAGAIN):
		st.flags &^= fReadyIn
	case res == -int32(unix.EINTR):
		d.queueRun(fd, st)
	default: // EOF or an error: final
		st.flags &^= fRecv
		d.queueSub(fd, st)
		d.emit(t, res, false, nil)
	}
}

func (d *Driver) sendResult(fd int, st *fdState, res int32) {
	if st.flags&fSendBusy == 0 || !st.hasSends() {
		return // ended meanwhile
	}
	st.flags &^= fSendBusy
	d.queueSub(fd, st) // the next send, a registration to change
	op := &st.sends[st.sendAt]
	switch {
	case res >= 0:
		op.off += int(res)
		if op.off >= len(op.p) {
			t, l := st.popSend()
			d.emit(t, int32(l), false, nil)
			return
		}
		d.awaitWritable(fd, st) // partial: the buffer is full
	case res == -int32(unix.EAGAIN):
		d.awaitWritable(fd, st)
	case res == -int32(unix.EINTR):
	default:
		t, _ := st.popSend()
		d.emit(t, res, false, nil)
		return
	}
	if op.cancel {
		t, _ := st.popSend()
		d.emit(t, ecanceled, false, nil)
	}
}

// awaitWritable clears the fd's write readiness after a send that found its
// buffer full, and registers the fd now if it is not: the submission phase
// tries the sends of an unregistered fd blindly, and only the plain form
// learns of a full buffer before it decides whether to register. Left
// unregistered, the fd would be tried again at once, forever.
func (d *Driver) awaitWritable(fd int, st *fdState) {
	st.flags &^= fReadyOut
	if st.flags&fRegistered == 0 {
		d.register(fd, st, unix.EPOLL_CTL_ADD)
	}
}
