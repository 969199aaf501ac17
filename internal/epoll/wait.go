package epoll

import (
	"fmt"
	"math"
	"time"

	"github.com/ringloop/ringloop/internal/driver"
	"golang.org/x/sys/unix"
)

// Wait submits the prepared ops, waits up to timeout for readiness and hands
// every completion to fn. With a positive timeout it returns before the
// deadline only for a completion or a Wake.
func (d *Driver) Wait(timeout time.Duration, fn func(*driver.Completion)) (int, error) {
	if d.closed.Load() {
		return 0, driver.ErrClosed
	}
	if d.cfg.Parked && timeout != 0 {
		if d.fn == nil && !d.resuming {
			return d.parkedWait(timeout, fn)
		}
		return d.rawParkedWait(timeout, fn)
	}
	return d.wait(timeout, fn)
}

// rawParkedWait is a parked loop's Wait called from a completion callback
// or from between (WaitResume), while its Waiter is busy: it blocks in
// epoll_wait, so Wake must write the eventfd. A Wake whose rawWaits check
// came first has left its flag, seen here: both sides store before they
// load.
func (d *Driver) rawParkedWait(timeout time.Duration, fn func(*driver.Completion)) (int, error) {
	d.rawWaits.Add(1)
	defer d.rawWaits.Add(-1)
	if d.park.Woken() {
		timeout = driver.NoWait
	}
	return d.wait(timeout, fn)
}

// wait is Wait in epoll_wait.
func (d *Driver) wait(timeout time.Duration, fn func(*driver.Completion)) (int, error) {
	var deadline time.Time
	if timeout > 0 {
		deadline = time.Now().Add(timeout)
	}
	total := 0
	for {
		d.submit()
		woke := false
		work := d.pendAt < len(d.pending) || len(d.runq) > 0 || d.batch != nil && d.batch.Queued()
		if work && d.polledLast {
			// Completions are ready: hand them over without epoll_wait, but
			// collect readiness at least every other Wait.
			d.polledLast = false
		} else {
			wait := timeout
			if work {
				wait = 0
			} else if timeout > 0 {
				if wait = time.Until(deadline); wait < 0 {
					wait = 0
				}
			}
			n, errno := d.epollWait(wait)
			d.polledLast, d.collected = true, true
			d.full = errno == 0 && n == len(d.events)
			switch errno {
			case 0:
				woke = d.handleEvents(n)
			case unix.EINTR:
			default:
				return total, fmt.Errorf("epoll: epoll_wait: %w", errno)
			}
		}
		total += d.process(fn)
		if total > 0 || woke || timeout == 0 || d.closed.Load() {
			return total, nil
		}
		if timeout > 0 && !time.Now().Before(deadline) {
			return total, nil
		}
	}
}

// WaitResume is Wait that, for a parked loop, runs between after each batch
// of completions and goes on parking while between asks to block: the
// netpoller keeps the epoll fd's readiness for as long as the park goes on,
// so the next park needs no epoll_wait first (see driver.Resumer).
// Only parkPoll calls between: a Wait that does not park (no timeout, a
// locked loop, one nested in a callback) never does.
func (d *Driver) WaitResume(timeout time.Duration, fn func(*driver.Completion), between func() (time.Duration, bool)) (int, error) {
	d.between = between
	n, err := d.Wait(timeout, fn)
	d.between = nil
	return n, err
}

// parkedWait is Wait for a parked loop with a timeout: it sleeps on the
// epoll fd in Go's netpoller. The epoll fd turns readable (a new edge) each
// time an fd in the set, the eventfd included, reports an event.
func (d *Driver) parkedWait(timeout time.Duration, fn func(*driver.Completion)) (int, error) {
	d.parkFn = fn
	n, err := d.park.Wait(timeout)
	d.parkFn = nil
	return n, err
}

// parkPoll hands out completions without blocking. Before the Waiter parks
// (it returns 0), the set's ready list has been collected since the poller
// forgot the epoll fd's readiness or took its last edge (since this call
// began), all of it: events left behind would raise no new edge. A call that
// hands out completions already queued (a send's) need not call epoll_wait,
// under Wait's every-other-Wait rule: nothing parks on it, and the next
// parkPoll collects. It goes round again while work waits for the next Wait
// rather than for an event: parking then would strand it. Under WaitResume,
// completions are followed by the loop's work (between) and, if the loop
// would wait again, by more of the same park, entered without epoll_wait once
// the set has been collected: every edge since is kept.
func (d *Driver) parkPoll() (int, error) {
	d.collected = false
	for {
		n, err := d.Wait(driver.NoWait, d.parkFn)
		if err == nil && n == 0 && d.closed.Load() { // closed by a callback
			err = driver.ErrClosed
		}
		if err != nil {
			return n, err
		}
		if n > 0 {
			if d.between == nil {
				return n, nil
			}
			// A panic or runtime.Goexit in between leaves resuming set: the
			// loop then goes on from a deferred call, above this park.
			d.resuming = true
			timeout, block := d.between()
			d.resuming = false
			if !block || d.closed.Load() {
				return n, nil
			}
			if err := d.park.Continue(timeout); err != nil {
				return n, err
			}
			// The loop's new ops (its flushes) go now: if they complete at
			// once, the next round hands them out without epoll_wait.
			d.submit()
		}
		if d.collected && !d.full && len(d.subq) == 0 && len(d.runq) == 0 && d.pendAt >= len(d.pending) &&
			(d.batch == nil || !d.batch.Queued()) {
			return 0, nil
		}
	}
}

// epollWait waits for events: nanosecond timeouts through epoll_pwait2,
// else whole milliseconds rounded up.
func (d *Driver) epollWait(timeout time.Duration) (int, unix.Errno) {
	var n int
	var errno unix.Errno
	switch {
	case timeout < 0:
		n, errno = epollWaitRaw(d.epfd, d.events, -1)
	case timeout == 0:
		n, errno = epollWaitRaw(d.epfd, d.events, 0)
	case d.pwait2:
		d.ts = unix.NsecToTimespec(int64(timeout))
		n, errno = epollPwait2Raw(d.epfd, d.events, &d.ts)
	default:
		ms := (timeout + time.Millisecond - 1) / time.Millisecond
		if ms > math.MaxInt32 {
			ms = math.MaxInt32
		}
		n, errno = epollWaitRaw(d.epfd, d.events, int(ms))
	}
	return n, errno
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

// submit performs the prepared ops: closes, connects, sends, registrations.
func (d *Driver) submit() {
	for i := 0; i < len(d.subq); i++ {
		fd := int(d.subq[i])
		st := d.fds[fd]
		st.flags &^= fQueuedSub
		d.submitFD(fd, st)
	}
	d.subq = d.subq[:0]
}

func (d *Driver) submitFD(fd int, st *fdState) {
	if st.flags&fClosing != 0 {
		d.endAll(st, ecanceled)
		res := int32(0)
		if err := unix.Close(fd); err != nil && err != unix.EINTR {
			res = negErrno(err)
		}
		// Closing removed the fd from the epoll set; forget its readiness.
		st.flags &= queueMask
		d.post(st.closeTag, res)
		return
	}
	if st.flags&fConnectNew != 0 {
		d.startConnect(fd, st)
	}
	if st.hasSends() && st.flags&fConnecting == 0 &&
		(st.flags&fRegistered == 0 || st.flags&fReadyOut != 0) {
		st.flags |= fReadyOut // unregistered: unknown, so try
		d.sendReady(fd, st)
	}
	switch {
	case st.needsEpoll():
		if st.flags&fRegistered == 0 {
			d.register(fd, st, unix.EPOLL_CTL_ADD)
		} else if st.flags&(fPollNew|fVerify) != 0 {
			// MOD re-evaluates readiness (a new poll must see the current
			// state) and proves the registration is still this file's.
			d.register(fd, st, unix.EPOLL_CTL_MOD)
		}
		st.flags &^= fPollNew | fVerify
		if st.flags&fRegistered != 0 && d.runnable(st) {
			d.queueRun(fd, st)
		}
	case st.flags&fRegistered != 0 && st.flags&fSendBusy == 0:
		// The last op ended: leave the set, so that the owner may close the
		// fd directly and its number can be reused.
		unix.EpollCtl(d.epfd, unix.EPOLL_CTL_DEL, fd, nil)
		st.flags &^= fRegistered | fVerify | readyMask
	}
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

// process hands over pending completions, then runs the ready fds.
func (d *Driver) process(fn func(*driver.Completion)) int {
	d.fn = fn
	d.count = 0
	d.drainPending()
	if d.batch != nil {
		d.batchResults() // left by a callback that never returned
	}
	// The fds of a run a callback never returned from (runtime.Goexit) go
	// first; the cursor moves before each fd, so none is lost.
	if d.runAt == len(d.running) {
		d.running, d.runAt = d.runq, 0
		d.runq = d.runq2[:0]
	}
	for d.runAt < len(d.running) {
		if d.count >= driver.DefaultWaitBatch || d.closed.Load() {
			d.runq = append(d.runq, d.running[d.runAt:]...) // still flagged fQueuedRun
			break
		}
		fd := int(d.running[d.runAt])
		d.runAt++
		st := d.fds[fd]
		st.flags &^= fQueuedRun
		d.runFD(fd, st)
		d.drainPending()
	}
	d.runq2 = d.running[:0]
	d.running, d.runAt = nil, 0
	if d.batch != nil && !d.closed.Load() {
		d.flushBatch()
		d.drainPending()
	}
	d.fn = nil
	return d.count
}

// drainPending hands queued final completions to the callback.
func (d *Driver) drainPending() {
	for d.pendAt < len(d.pending) && d.count < driver.DefaultWaitBatch && !d.closed.Load() {
		c := d.pending[d.pendAt]
		d.pending[d.pendAt] = driver.Completion{}
		d.pendAt++
		d.comp = c
		d.count++
		d.fn(&d.comp)
	}
	if d.pendAt == len(d.pending) && d.pending != nil {
		d.pending = d.pending[:0]
		d.pendAt = 0
	}
}

// runFD acts on an fd's readiness: connect, sends, accepts or receives, poll.
// Callbacks may change the fd's state at each completion, so flags are read
// again after each one.
func (d *Driver) runFD(fd int, st *fdState) {
	if st.flags&fClosing != 0 || st.flags&fRegistered == 0 {
		return
	}
	if st.flags&fConnecting != 0 && st.flags&fReadyOut != 0 {
		d.finishConnect(fd, st)
	}
	if st.hasSends() && st.flags&(fReadyOut|fConnecting|fClosing) == fReadyOut {
		d.sendReady(fd, st)
		if !st.hasSends() {
			d.queueSub(fd, st) // maybe the last op: re-evaluate registration
		}
	}
	if st.flags&(fAccept|fReadyIn|fClosing) == fAccept|fReadyIn {
		d.acceptLoop(fd, st)
	}
	if st.flags&(fRecv|fReadyIn|fClosing) == fRecv|fReadyIn {
		if d.batch != nil {
			d.batchRecv(fd, st)
		} else {
			d.recvLoop(fd, st)
		}
	}
	if st.flags&(fPoll|fClosing) == fPoll && st.pollReady != 0 {
		ready := st.pollReady
		st.pollReady = 0
		d.emit(st.pollTag, int32(ready), true, nil)
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
