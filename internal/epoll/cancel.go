package epoll

import "github.com/ringloop/ringloop/internal/driver"

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
