package epoll

import (
	"unsafe"

	"github.com/ringloop/ringloop/internal/driver"
	"golang.org/x/sys/unix"
)

// Send queues p for fd; sends on one fd run in order. p must stay untouched
// until its completion.
func (d *Driver) Send(fd int, t driver.Tag, p []byte) {
	st := d.target(fd, t)
	if st == nil {
		return
	}
	st.arming()
	st.sends = append(st.sends, sendOp{tag: t, p: p})
	d.queueSub(fd, st)
}

// cancelSend removes send t from the fd's queue; a send in the Batch is
// only marked (later), its result ends it.
func (d *Driver) cancelSend(st *fdState, t driver.Tag) (found, later bool) {
	for i := st.sendAt; i < len(st.sends); i++ {
		if st.sends[i].tag != t {
			continue
		}
		if i == st.sendAt && st.flags&fSendBusy != 0 {
			st.sends[i].cancel = true
			return true, true
		}
		copy(st.sends[i:], st.sends[i+1:])
		st.sends[len(st.sends)-1] = sendOp{}
		st.sends = st.sends[:len(st.sends)-1]
		if st.sendAt == len(st.sends) {
			st.sends = st.sends[:0]
			st.sendAt = 0
		}
		return true, false
	}
	return false, false
}

// sendReady writes the fd's queued sends: itself, or through the Batch.
func (d *Driver) sendReady(fd int, st *fdState) {
	if d.batch != nil {
		d.batchSend(fd, st)
		return
	}
	d.flushSends(fd, st)
}

// flushSends writes queued sends in order until one blocks.
func (d *Driver) flushSends(fd int, st *fdState) {
	for st.hasSends() {
		op := &st.sends[st.sendAt]
		n, errno := sendRaw(fd, op.p[op.off:])
		switch errno {
		case 0:
		case unix.EAGAIN:
			st.flags &^= fReadyOut
			return
		case unix.EINTR:
			continue
		default:
			t, _ := st.popSend()
			d.emit(t, -int32(errno), false, nil)
			continue
		}
		op.off += n
		if op.off < len(op.p) {
			// A partial write means the socket buffer is full, and the kernel
			// will raise EPOLLOUT when it drains.
			st.flags &^= fReadyOut
			return
		}
		t, l := st.popSend()
		d.emit(t, int32(l), false, nil)
	}
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

func sendRaw(fd int, p []byte) (int, unix.Errno) {
	var ptr unsafe.Pointer
	if len(p) > 0 {
		ptr = unsafe.Pointer(&p[0])
	}
	n, _, e := unix.RawSyscall6(unix.SYS_SENDTO, uintptr(fd), uintptr(ptr), uintptr(len(p)),
		unix.MSG_DONTWAIT|unix.MSG_NOSIGNAL, 0, 0)
	return int(n), e
}

// sendReason is the plain form's send line in Features.Reasons.
const sendReason = "send: tried in Wait's submission phase; EPOLLOUT edge continues partial sends"
