package epoll

import (
	"fmt"

	"github.com/ringloop/ringloop/internal/driver"
	"golang.org/x/sys/unix"
)

// AcceptBudget is how many connections one armed accept may take per Wait
// before the driver moves on; the listener is resumed at the next Wait.
const AcceptBudget = 64

// Accept keeps accepting on the listening socket fd until cancelled.
func (d *Driver) Accept(fd int, t driver.Tag) {
	if st := d.arm(fd, t, fAccept); st != nil {
		st.acceptTag = t
	}
}

func (d *Driver) acceptLoop(fd int, st *fdState) {
	t := st.acceptTag
	for i := 0; i < AcceptBudget; i++ {
		nfd, errno := accept4Raw(fd)
		switch errno {
		case 0:
			d.emit(t, int32(nfd), true, nil)
			if st.flags&(fAccept|fClosing) != fAccept || st.acceptTag != t {
				return
			}
		case unix.EAGAIN:
			st.flags &^= fReadyIn
			return
		case unix.EINTR, unix.ECONNABORTED:
		default:
			st.flags &^= fAccept
			d.emit(t, -int32(errno), false, nil)
			d.queueSub(fd, st)
			return
		}
	}
	d.queueRun(fd, st) // budget spent: resume at the next Wait
}

func accept4Raw(fd int) (int, unix.Errno) {
	n, _, e := unix.RawSyscall6(unix.SYS_ACCEPT4, uintptr(fd), 0, 0,
		unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0, 0)
	return int(n), e
}

// acceptReason is the accept family's line in Features.Reasons.
var acceptReason = fmt.Sprintf("accept: accept4 NONBLOCK|CLOEXEC, up to %d per listener per Wait", AcceptBudget)
