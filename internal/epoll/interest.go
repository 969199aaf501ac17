package epoll

import "golang.org/x/sys/unix"

// The interest every registered fd has, for its whole registration (plus
// EPOLLPRI while a poll asks for it).
const interest = unix.EPOLLIN | unix.EPOLLOUT | unix.EPOLLRDHUP | unix.EPOLLET

// interest is the fd's epoll mask: the stable one, plus EPOLLPRI for a poll
// that asks for urgent data (a new poll always re-registers with MOD).
func (st *fdState) interest() uint32 {
	if st.flags&fPoll != 0 {
		return interest | st.pollEvents&unix.EPOLLPRI
	}
	return interest
}

// handleEvents records readiness and queues the fds; it reports a wake.
func (d *Driver) handleEvents(n int) bool {
	woke := false
	for i := 0; i < n; i++ {
		ev := &d.events[i]
		if ev.Fd == wakeMark {
			woke = true
			continue
		}
		fd := int(ev.Fd)
		st := d.lookup(fd)
		if st == nil || st.flags&fRegistered == 0 || uint32(ev.Pad) != st.gen {
			continue // from an earlier registration of this fd number
		}
		e := ev.Events
		if e&(unix.EPOLLIN|unix.EPOLLRDHUP|unix.EPOLLHUP|unix.EPOLLERR) != 0 {
			st.flags |= fReadyIn
		}
		if e&(unix.EPOLLOUT|unix.EPOLLHUP|unix.EPOLLERR) != 0 {
			st.flags |= fReadyOut
		}
		if e&(unix.EPOLLRDHUP|unix.EPOLLHUP|unix.EPOLLERR) != 0 {
			st.flags |= fHup
		}
		if st.flags&fPoll != 0 {
			st.pollReady |= e & (st.pollEvents | unix.EPOLLERR | unix.EPOLLHUP)
		}
		d.queueRun(fd, st)
	}
	if n == len(d.events) && len(d.events) < maxEvents {
		d.events = make([]unix.EpollEvent, 2*len(d.events))
	}
	return woke
}

// register adds fd to the set under a new generation, or modifies its
// registration (falling back to an add when the fd number now names a file
// the set does not hold).
func (d *Driver) register(fd int, st *fdState, op int) {
	if op == unix.EPOLL_CTL_ADD {
		st.gen++
		st.flags &^= readyMask
	}
	ev := unix.EpollEvent{Events: st.interest(), Fd: int32(fd), Pad: int32(st.gen)}
	err := unix.EpollCtl(d.epfd, op, fd, &ev)
	switch {
	case err == unix.EEXIST && op == unix.EPOLL_CTL_ADD:
		// Still registered from before its owner reused the fd number.
		err = unix.EpollCtl(d.epfd, unix.EPOLL_CTL_MOD, fd, &ev)
	case err == unix.ENOENT && op == unix.EPOLL_CTL_MOD:
		// Closed by its owner (which left the set) and the number reused.
		st.gen++
		st.flags &^= readyMask
		ev.Pad = int32(st.gen)
		err = unix.EpollCtl(d.epfd, unix.EPOLL_CTL_ADD, fd, &ev)
	}
	if err != nil {
		st.flags &^= fRegistered | readyMask
		d.endAll(st, negErrno(err))
		return
	}
	st.flags |= fRegistered
}

// runnable reports whether known readiness lets an armed op progress.
func (d *Driver) runnable(st *fdState) bool {
	f := st.flags
	return f&(fRecv|fAccept) != 0 && f&fReadyIn != 0 ||
		f&fConnecting != 0 && f&fReadyOut != 0 ||
		st.pollReady != 0
}

// interestReason says how fds join the epoll set.
const interestReason = "interest: edge-triggered EPOLLIN|EPOLLOUT|EPOLLRDHUP, added once per fd, no epoll_ctl per op"
