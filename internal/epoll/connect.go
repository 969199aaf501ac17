package epoll

import (
	"github.com/ringloop/ringloop/internal/driver"
	"golang.org/x/sys/unix"
)

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

// startConnect issues connect(2).
func (d *Driver) startConnect(fd int, st *fdState) {
	sa := st.sa
	st.sa = nil
	st.flags &^= fConnectNew
	err := unix.Connect(fd, sa)
	switch err {
	case nil:
		d.post(st.connectTag, 0)
	case unix.EINPROGRESS, unix.EINTR:
		st.flags |= fConnecting
		st.flags &^= fReadyOut // wait for the edge the connection raises
	default:
		d.post(st.connectTag, negErrno(err))
	}
}

// finishConnect reads SO_ERROR once the connecting socket raised an edge.
func (d *Driver) finishConnect(fd int, st *fdState) {
	st.flags &^= fConnecting
	res := int32(0)
	soerr, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_ERROR)
	switch {
	case err != nil:
		res = negErrno(err)
	case soerr != 0:
		res = -int32(soerr)
	}
	d.emit(st.connectTag, res, false, nil)
}
