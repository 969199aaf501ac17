package epoll

import (
	"fmt"
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
		d.closeNow(fd, st)
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
		d.runPoll(st)
	}
}
