package epoll

import (
	"github.com/ringloop/ringloop/internal/driver"
	"golang.org/x/sys/unix"
)

// CloseFD ends the fd's armed ops with -ECANCELED and closes it at the next
// Wait, reporting close(2)'s result under t.
func (d *Driver) CloseFD(fd int, t driver.Tag) {
	st := d.target(fd, t)
	if st == nil {
		return
	}
	if st.flags&fClosing != 0 {
		d.post(t, ebadf)
		return
	}
	st.flags |= fClosing
	st.closeTag = t
	d.queueSub(fd, st)
}

// closeNow performs a prepared CloseFD in the submission phase: the fd's
// armed ops end with -ECANCELED, then close(2)'s result is reported.
func (d *Driver) closeNow(fd int, st *fdState) {
	d.endAll(st, ecanceled)
	res := int32(0)
	if err := unix.Close(fd); err != nil && err != unix.EINTR {
		res = negErrno(err)
	}
	// Closing removed the fd from the epoll set; forget its readiness.
	st.flags &= queueMask
	d.post(st.closeTag, res)
}
