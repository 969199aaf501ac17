package epoll

import (
	"fmt"
	"unsafe"

	"github.com/ringloop/ringloop/internal/driver"
	"golang.org/x/sys/unix"
)

// ReadBudget is how many reads one armed receive may make per Wait before
// the driver moves on to other fds (Netty's maxMessagesPerRead); the fd is
// resumed at the next Wait.
const ReadBudget = 16

// DefaultBufferSize is the size of the loop-owned receive buffer (the most
// one read takes) when Config.BufferSize is 0.
const DefaultBufferSize = 16 << 10

// Recv keeps receiving from fd until cancelled, EOF or an error.
func (d *Driver) Recv(fd int, t driver.Tag) {
	if st := d.arm(fd, t, fRecv); st != nil {
		st.recvTag = t
	}
}

func (d *Driver) recvLoop(fd int, st *fdState) {
	t := st.recvTag
	buf := d.buf
	for i := 0; i < ReadBudget; i++ {
		n, errno := recvRaw(fd, buf)
		switch errno {
		case 0:
		case unix.EAGAIN:
			st.flags &^= fReadyIn
			return
		case unix.EINTR:
			continue
		default:
			st.flags &^= fRecv
			d.emit(t, -int32(errno), false, nil)
			d.queueSub(fd, st)
			return
		}
		if n == 0 {
			st.flags &^= fRecv
			d.emit(t, 0, false, nil)
			d.queueSub(fd, st)
			return
		}
		d.emit(t, int32(n), true, buf[:n])
		if st.flags&(fRecv|fClosing) != fRecv || st.recvTag != t {
			return
		}
		if n < len(buf) && st.flags&fHup == 0 && d.isStream(fd, st) {
			// The queue is empty; new data raises a new edge.
			st.flags &^= fReadyIn
			return
		}
	}
	d.queueRun(fd, st) // budget spent: resume at the next Wait
}

// isStream reports (once per registration) whether fd is a SOCK_STREAM
// socket, where a short read proves the receive queue empty.
func (d *Driver) isStream(fd int, st *fdState) bool {
	if st.flags&fStreamKnown == 0 {
		st.flags |= fStreamKnown
		if typ, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TYPE); err == nil && typ == unix.SOCK_STREAM {
			st.flags |= fStream
		}
	}
	return st.flags&fStream != 0
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

func recvRaw(fd int, p []byte) (int, unix.Errno) {
	n, _, e := unix.RawSyscall6(unix.SYS_RECVFROM, uintptr(fd), uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)),
		unix.MSG_DONTWAIT, 0, 0)
	return int(n), e
}

// recvReason is the plain form's receive line in Features.Reasons.
func (d *Driver) recvReason() string {
	return fmt.Sprintf("recv: up to %d reads of %d B per fd per Wait, then the next fd (fairness)", ReadBudget, d.cfg.BufferSize)
}
