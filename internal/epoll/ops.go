package epoll

import (
	"github.com/ringloop/ringloop/internal/driver"
	"golang.org/x/sys/unix"
)

const (
	ecanceled = -int32(unix.ECANCELED)
	ebusy     = -int32(unix.EBUSY)
	ebadf     = -int32(unix.EBADF)
)

// arm prepares a single-instance op of kind flag on fd; it reports false
// (and ends t) when the op cannot be armed.
func (d *Driver) arm(fd int, t driver.Tag, flag uint32) *fdState {
	if d.closed.Load() {
		return nil
	}
	if fd < 0 {
		d.post(t, ebadf)
		return nil
	}
	st := d.state(fd)
	if st.flags&flag != 0 {
		d.post(t, ebusy)
		return nil
	}
	st.arming()
	st.flags |= flag
	d.queueSub(fd, st)
	return st
}

// Accept keeps accepting on the listening socket fd until cancelled.
func (d *Driver) Accept(fd int, t driver.Tag) {
	if st := d.arm(fd, t, fAccept); st != nil {
		st.acceptTag = t
	}
}

// Recv keeps receiving from fd until cancelled, EOF or an error.
func (d *Driver) Recv(fd int, t driver.Tag) {
	if st := d.arm(fd, t, fRecv); st != nil {
		st.recvTag = t
	}
}

// Poll keeps reporting readiness of fd for events until cancelled.
func (d *Driver) Poll(fd int, t driver.Tag, events uint32) {
	if st := d.arm(fd, t, fPoll); st != nil {
		st.pollTag = t
		st.pollEvents = events
		st.pollReady = 0
		st.flags |= fPollNew
	}
}

// Connect starts connecting the non-blocking socket fd to sa at the next
// Wait.
func (d *Driver) Connect(fd int, t driver.Tag, sa unix.Sockaddr) {
	if d.closed.Load() {
		return
	}
	if fd >= 0 {
		if st := d.state(fd); st.flags&(fConnectNew|fConnecting) != 0 {
			d.post(t, -int32(unix.EALREADY))
			return
		}
	}
	if st := d.arm(fd, t, fConnectNew); st != nil {
		st.connectTag = t
		st.sa = sa
	}
}

// Send queues p for fd; sends on one fd run in order. p must stay untouched
// until its completion.
func (d *Driver) Send(fd int, t driver.Tag, p []byte) {
	if d.closed.Load() {
		return
	}
	if fd < 0 {
		d.post(t, ebadf)
		return
	}
	st := d.state(fd)
	st.arming()
	st.sends = append(st.sends, sendOp{tag: t, p: p})
	d.queueSub(fd, st)
}

// Cancel ends op t on fd with -ECANCELED; it does nothing if t has ended.
func (d *Driver) Cancel(fd int, t driver.Tag) {
	st := d.lookup(fd)
	if st == nil || d.closed.Load() {
		return
	}
	switch {
	case st.flags&fRecv != 0 && st.recvTag == t:
		if st.flags&fRecvBusy != 0 {
			st.flags |= fRecvCancel // its result ends it
			return
		}
		st.flags &^= fRecv
	case st.flags&fAccept != 0 && st.acceptTag == t:
		st.flags &^= fAccept
	case st.flags&fPoll != 0 && st.pollTag == t:
		st.flags &^= fPoll | fPollNew
		st.pollReady = 0
	case st.flags&(fConnectNew|fConnecting) != 0 && st.connectTag == t:
		st.flags &^= fConnectNew | fConnecting
		st.sa = nil
	default:
		if found, later := d.cancelSend(st, t); !found || later {
			return
		}
	}
	d.post(t, ecanceled)
	d.queueSub(fd, st) // re-evaluate the registration
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

// CloseFD ends the fd's armed ops with -ECANCELED and closes it at the next
// Wait, reporting close(2)'s result under t.
func (d *Driver) CloseFD(fd int, t driver.Tag) {
	if d.closed.Load() {
		return
	}
	if fd < 0 {
		d.post(t, ebadf)
		return
	}
	st := d.state(fd)
	if st.flags&fClosing != 0 {
		d.post(t, ebadf)
		return
	}
	st.flags |= fClosing
	st.closeTag = t
	d.queueSub(fd, st)
}
