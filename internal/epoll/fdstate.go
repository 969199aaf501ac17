package epoll

import (
	"github.com/ringloop/ringloop/internal/driver"
	"golang.org/x/sys/unix"
)

// fdState flags.
const (
	fRegistered  uint32 = 1 << iota // in the epoll set under gen
	fQueuedSub                      // in subq
	fQueuedRun                      // in runq
	fReadyIn                        // readable (or hung up) since the last EAGAIN
	fReadyOut                       // writable (or hung up) since the last EAGAIN
	fHup                            // RDHUP, HUP or ERR seen: read to EOF or error
	fRecv                           // a receive is armed
	fAccept                         // an accept is armed
	fPoll                           // a poll is armed
	fPollNew                        // the poll was armed since the last submission
	fConnectNew                     // a connect is prepared, not started
	fConnecting                     // a connect is in progress
	fClosing                        // CloseFD prepared
	fStreamKnown                    // fStream is valid for this registration
	fStream                         // SOCK_STREAM: a short read drains the queue
	fVerify                         // armed while registered with no op: check the registration
	fRecvBusy                       // a receive is in the Batch, its result not handled yet
	fSendBusy                       // the head send is in the Batch, its result not handled yet
	fRecvCancel                     // Cancel came while the receive was busy: end it at its result

	readyMask = fReadyIn | fReadyOut | fHup | fStreamKnown | fStream
	queueMask = fQueuedSub | fQueuedRun
	opMask    = fRecv | fAccept | fPoll | fConnectNew | fConnecting
)

// sendOp is one Send in an fd's queue.
type sendOp struct {
	tag    driver.Tag
	p      []byte
	off    int
	cancel bool // Cancel came while the send was busy: end it at its result
}

// fdState is what the driver knows about one fd. States live behind
// pointers indexed by fd number, allocated once per number and reused.
type fdState struct {
	flags      uint32
	gen        uint32 // registration generation, carried in event data
	pollEvents uint32
	pollReady  uint32 // events for the armed poll, not yet reported
	recvTag    driver.Tag
	acceptTag  driver.Tag
	pollTag    driver.Tag
	connectTag driver.Tag
	closeTag   driver.Tag
	sa         unix.Sockaddr
	sends      []sendOp
	sendAt     int
}

func (st *fdState) hasSends() bool { return st.sendAt < len(st.sends) }

// popSend drops the head send and returns its tag and length.
func (st *fdState) popSend() (driver.Tag, int) {
	op := st.sends[st.sendAt]
	st.sends[st.sendAt] = sendOp{}
	st.sendAt++
	if st.sendAt == len(st.sends) {
		st.sends = st.sends[:0]
		st.sendAt = 0
	}
	return op.tag, len(op.p)
}

// hasOps reports whether any op is armed on the fd.
func (st *fdState) hasOps() bool { return st.flags&opMask != 0 || st.hasSends() }

// arming notes an op about to be armed: an fd that had no op may have been
// closed by its owner and its number reused since its registration (the
// deferred EPOLL_CTL_DEL has not run), so the registration is checked.
func (st *fdState) arming() {
	if st.flags&fRegistered != 0 && !st.hasOps() {
		st.flags |= fVerify
	}
}

// needsEpoll reports whether the fd has an op that waits for readiness.
func (st *fdState) needsEpoll() bool {
	return st.flags&(fRecv|fAccept|fPoll|fConnecting) != 0 ||
		(st.hasSends() && st.flags&fReadyOut == 0)
}

// state returns fd's state, creating it (and growing the table) on first use.
func (d *Driver) state(fd int) *fdState {
	if fd >= len(d.fds) {
		n := 2 * len(d.fds)
		if n < 64 {
			n = 64
		}
		for n <= fd {
			n *= 2
		}
		fds := make([]*fdState, n)
		copy(fds, d.fds)
		d.fds = fds
	}
	st := d.fds[fd]
	if st == nil {
		st = &fdState{}
		d.fds[fd] = st
	}
	return st
}

// lookup returns fd's state or nil.
func (d *Driver) lookup(fd int) *fdState {
	if fd < 0 || fd >= len(d.fds) {
		return nil
	}
	return d.fds[fd]
}

func (d *Driver) queueSub(fd int, st *fdState) {
	if st.flags&fQueuedSub == 0 {
		st.flags |= fQueuedSub
		d.subq = append(d.subq, int32(fd))
	}
}

func (d *Driver) queueRun(fd int, st *fdState) {
	if st.flags&fQueuedRun == 0 {
		st.flags |= fQueuedRun
		d.runq = append(d.runq, int32(fd))
	}
}

// emit hands a completion to the callback while Wait runs one, else queues
// it (final completions only) for the next hand-over.
func (d *Driver) emit(t driver.Tag, res int32, more bool, data []byte) {
	if d.fn == nil {
		d.pending = append(d.pending, driver.Completion{Tag: t, Res: res})
		return
	}
	d.comp = driver.Completion{Tag: t, Res: res, More: more, Data: data}
	d.count++
	d.fn(&d.comp)
}

// post queues a final completion; used where a callback may be running.
func (d *Driver) post(t driver.Tag, res int32) {
	d.pending = append(d.pending, driver.Completion{Tag: t, Res: res})
}

// endAll ends every op armed on the fd with res.
func (d *Driver) endAll(st *fdState, res int32) {
	if st.flags&fConnectNew != 0 {
		st.sa = nil
	}
	if st.flags&(fConnectNew|fConnecting) != 0 {
		d.post(st.connectTag, res)
	}
	st.flags &^= fRecvBusy | fSendBusy | fRecvCancel // a result still due is stale now
	for st.hasSends() {
		t, _ := st.popSend()
		d.post(t, res)
	}
	if st.flags&fRecv != 0 {
		d.post(st.recvTag, res)
	}
	if st.flags&fAccept != 0 {
		d.post(st.acceptTag, res)
	}
	if st.flags&fPoll != 0 {
		d.post(st.pollTag, res)
	}
	st.flags &^= opMask | fPollNew
	st.pollReady = 0
}

const (
	ecanceled = -int32(unix.ECANCELED)
	ebusy     = -int32(unix.EBUSY)
	ebadf     = -int32(unix.EBADF)
)

// arm prepares a single-instance op of kind flag on fd; it reports false
// (and ends t) when the op cannot be armed.
func (d *Driver) arm(fd int, t driver.Tag, flag uint32) *fdState {
	st := d.target(fd, t)
	if st == nil {
		return nil
	}
	if st.flags&flag != 0 {
		d.post(t, ebusy)
		return nil
	}
	st.arming()
	st.flags |= flag
	d.queueSub(fd, st)
	return st
}

// target returns the state of fd for an op being prepared under t, or nil
// when the driver is closed or fd is negative (t then ends with -EBADF).
func (d *Driver) target(fd int, t driver.Tag) *fdState {
	if d.closed.Load() {
		return nil
	}
	if fd < 0 {
		d.post(t, ebadf)
		return nil
	}
	return d.state(fd)
}
