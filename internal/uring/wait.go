//go:build linux && cgo && !ringloop_nouring

package uring

import (
	"errors"
	"fmt"
	"time"

	"github.com/ringloop/ringloop/internal/driver"
	"github.com/ringloop/ringloop/internal/liburing"
	"golang.org/x/sys/unix"
)

var errWrongThread = errors.New("uring: io_uring_enter from a thread other than the loop's: " +
	"SINGLE_ISSUER/DEFER_TASKRUN rings need every Wait on the thread that enabled the ring (runtime.LockOSThread)")

// Wait hands every prepared op to the kernel and reaps completions in one
// cgo call (one io_uring_enter in the common case), waiting up to timeout
// when none is ready. Completions that are the driver's own (wake, cancel,
// buffer provisioning, timeouts) are not reported; a Wake makes Wait return
// even with nothing to report. EINTR is retried inside.
func (d *Driver) Wait(timeout time.Duration, fn func(*driver.Completion)) (int, error) {
	if d.closed.Load() {
		return 0, driver.ErrClosed
	}
	d.inWait = true
	n, err := d.wait(timeout, fn)
	d.inWait = false
	if d.closeLater {
		d.closeNow()
	}
	return n, err
}

func (d *Driver) wait(timeout time.Duration, fn func(*driver.Completion)) (int, error) {
	if !d.enabled.Load() {
		if err := d.Enable(); err != nil {
			return 0, err
		}
	}
	var start time.Time
	if timeout > 0 {
		start = time.Now()
	}
	// A callback that never returned (runtime.Goexit) left the rest of its
	// batch: it goes first.
	woke := false
	total := d.handleCQEs(fn, &woke)
	for {
		d.unpark()
		t := int64(timeout)
		switch {
		case len(d.synth) > 0 || total > 0 || woke:
			t = 0
		case timeout < 0:
			t = -1
		case timeout > 0:
			t = int64(timeout - time.Since(start))
			if t <= 0 {
				t = 0
			}
		}
		n, err := d.run(t, len(d.cqes))
		if err != nil {
			return total, err
		}
		total += d.deliverSynth(fn)
		d.cqHead, d.cqTail = 0, n
		total += d.handleCQEs(fn, &woke)
		if total > 0 || woke || t == 0 || d.closed.Load() {
			return total, nil
		}
		if timeout > 0 && time.Since(start) >= timeout {
			return 0, nil
		}
		// Only the driver's own completions arrived: keep waiting.
	}
}

// handleCQEs handles the CQEs of the last batch not handled yet. The head
// moves before each callback, so a callback that never returns (a handler
// calling runtime.Goexit) leaves the rest for the next Wait, not lost.
func (d *Driver) handleCQEs(fn func(*driver.Completion), woke *bool) int {
	total := 0
	for d.cqHead < d.cqTail {
		c := &d.cqes[d.cqHead]
		d.cqHead++
		total += d.handle(c, fn, woke)
	}
	return total
}

// run is the cgo call: returns, descriptors, submit, wait, copy out.
func (d *Driver) run(timeout int64, maxCQE int) (int, error) {
	d.stats.Runs++
	n, left, err := d.ring.Run(d.batch, d.nsq, d.nret, timeout, maxCQE)
	d.nsq = left
	d.nret = 0
	if err != nil {
		if errors.Is(err, unix.EEXIST) {
			return 0, fmt.Errorf("%w: %w", errWrongThread, err)
		}
		return 0, fmt.Errorf("uring: io_uring_enter: %w", err)
	}
	return n, nil
}

// emit calls fn with one completion; Data is cleared afterwards so that the
// driver's buffers are not kept reachable through it.
func (d *Driver) emit(fn func(*driver.Completion), t driver.Tag, res int32, more bool, data []byte) {
	c := &d.comp
	c.Tag, c.Res, c.More, c.Data = t, res, more, data
	fn(c)
	c.Data = nil
}

// deliverSynth reports the final completions the driver made itself.
func (d *Driver) deliverSynth(fn func(*driver.Completion)) int {
	count := 0
	for i := 0; i < len(d.synth); i++ { // callbacks may append
		s := d.synth[i]
		o := d.ops.at(s.ref.idx)
		if !o.inUse || o.gen != s.ref.gen || o.state != stSynth {
			continue
		}
		t := o.tag
		d.ops.release(s.ref.idx, o)
		d.emit(fn, t, s.res, false, nil)
		count++
	}
	d.synth = d.synth[:0]
	return count
}

// unpark re-arms receives parked without a buffer (ENOBUFS, or an empty
// recvPolled free list): by now every callback has returned its buffer,
// and the next Run publishes them before it preps the re-armed receives.
func (d *Driver) unpark() {
	if len(d.parked) == 0 {
		return
	}
	for _, r := range d.parked {
		o := d.ops.at(r.idx)
		if o.inUse && o.gen == r.gen && o.state == stParked {
			d.armRecv(r.idx, o)
		}
	}
	d.parked = d.parked[:0]
}

// final reports op's last completion and frees its slot (and tag).
func (d *Driver) final(fn func(*driver.Completion), idx int32, o *op, res int32) int {
	t := o.tag
	d.ops.release(idx, o)
	d.emit(fn, t, res, false, nil)
	return 1
}

const (
	eCanceled = -int32(unix.ECANCELED)
	eNoBufs   = -int32(unix.ENOBUFS)
)

// handle turns one CQE into the engine's completions and returns how many
// it reported.
func (d *Driver) handle(c *liburing.CQE, fn func(*driver.Completion), woke *bool) int {
	u := c.UserData
	if u&udReserved == 0 { // MSG_RING from another loop: an engine tag
		d.emit(fn, driver.Tag(u), c.Res, false, nil)
		return 1
	}
	if u&udOpBit == 0 || u == liburing.TimeoutUserData {
		switch u {
		case udWake:
			*woke = true
			d.wakeArm = false
			if !d.closed.Load() {
				d.armWake()
			}
		}
		return 0 // cancel results, timeouts
	}
	idx := int32(uint32(u))
	gen := uint32(u>>32) & uint32(udGenMask)
	hasBuf := c.Flags&liburing.CQEFBuffer != 0
	bid := uint16(c.Flags >> liburing.CQEBufferShift)
	if idx < 0 || idx >= d.ops.n {
		return 0
	}
	o := d.ops.at(idx)
	if !o.inUse || o.gen != gen || o.state != stLive {
		if hasBuf { // a stale op's buffer still goes back
			d.giveBack(bid)
		}
		return 0
	}
	more := c.Flags&liburing.CQEFMore != 0
	res := c.Res
	if !more {
		o.state = stEnded
	}
	switch o.kind {
	case kindAccept:
		return d.onAccept(fn, idx, o, res, more)
	case kindRecv:
		return d.onRecv(fn, idx, o, res, more, hasBuf, bid)
	case kindSend:
		return d.onSend(fn, idx, o, res)
	case kindPoll:
		return d.onPoll(fn, idx, o, res, more)
	case kindMsgRing:
		if res < 0 {
			d.stats.MsgRingFailed++
		}
	}
	return d.final(fn, idx, o, res) // connect, close, nop, msg ring
}

// rearmOrEnd follows a successful result whose SQE has ended: the op goes
// on (re-armed) unless it was cancelled meanwhile.
func (d *Driver) rearmOrEnd(fn func(*driver.Completion), idx int32, o *op) int {
	if o.cancel {
		return d.final(fn, idx, o, eCanceled)
	}
	switch o.kind {
	case kindAccept:
		d.armAccept(idx, o)
	case kindRecv:
		d.armRecv(idx, o)
	case kindPoll:
		d.armPoll(idx, o)
	}
	return 0
}

func (d *Driver) onAccept(fn func(*driver.Completion), idx int32, o *op, res int32, more bool) int {
	if res >= 0 {
		d.emit(fn, o.tag, res, true, nil)
		if more {
			return 1
		}
		return 1 + d.rearmOrEnd(fn, idx, o)
	}
	if more {
		return 0
	}
	switch res {
	case -int32(unix.ECONNABORTED), -int32(unix.EAGAIN), -int32(unix.EINTR):
		// The peer went away before accept: not the listener's problem.
		if !o.cancel {
			d.armAccept(idx, o)
			return 0
		}
		res = eCanceled
	}
	return d.final(fn, idx, o, res)
}

func (d *Driver) onRecv(fn func(*driver.Completion), idx int32, o *op, res int32, more, hasBuf bool, bid uint16) int {
	if d.recv == recvPolled {
		return d.onPolledRecv(fn, idx, o, res)
	}
	if res > 0 {
		var data []byte
		if hasBuf {
			data = d.bufs.data(bid, res)
		} else {
			data = o.rbuf[:res]
		}
		d.emit(fn, o.tag, res, true, data)
		if hasBuf {
			d.giveBack(bid)
		}
		if more {
			return 1
		}
		return 1 + d.rearmOrEnd(fn, idx, o)
	}
	if hasBuf {
		d.giveBack(bid)
	}
	if more {
		return 0
	}
	if res == eNoBufs {
		if o.cancel {
			return d.final(fn, idx, o, eCanceled)
		}
		d.stats.NoBufs++
		o.state = stParked
		d.parked = append(d.parked, opRef{idx, o.gen})
		return 0
	}
	return d.final(fn, idx, o, res) // EOF (0), -ECANCELED or an error
}

// onPolledRecv follows a recvPolled op: its readiness poll fired (lend a
// buffer and receive, or wait for one), or its receive ended (report the
// data, give the buffer back, poll again).
func (d *Driver) onPolledRecv(fn func(*driver.Completion), idx int32, o *op, res int32) int {
	if o.polling {
		switch {
		case res < 0: // -ECANCELED or an error
			return d.final(fn, idx, o, res)
		case o.cancel:
			return d.final(fn, idx, o, eCanceled)
		}
		bid, ok := d.bufs.take()
		if !ok {
			d.stats.NoBufs++
			o.state = stParked
			d.parked = append(d.parked, opRef{idx, o.gen})
			return 0
		}
		d.armPolledRecv(idx, o, bid)
		return 0
	}
	if res > 0 {
		d.emit(fn, o.tag, res, true, d.bufs.data(o.bid, res))
		d.giveBack(o.bid)
		return 1 + d.rearmOrEnd(fn, idx, o)
	}
	d.giveBack(o.bid)
	if res == -int32(unix.EAGAIN) { // readiness someone else consumed
		return d.rearmOrEnd(fn, idx, o)
	}
	return d.final(fn, idx, o, res) // EOF (0), -ECANCELED or an error
}

func (d *Driver) onSend(fn func(*driver.Completion), idx int32, o *op, res int32) int {
	if res < 0 {
		return d.final(fn, idx, o, res)
	}
	o.sent += int(res)
	if o.sent < len(o.p) {
		switch {
		case o.cancel:
			return d.final(fn, idx, o, eCanceled)
		case res == 0:
			return d.final(fn, idx, o, -int32(unix.EIO))
		}
		d.armSend(idx, o)
		return 0
	}
	return d.final(fn, idx, o, int32(min(len(o.p), 1<<31-1)))
}

func (d *Driver) onPoll(fn func(*driver.Completion), idx int32, o *op, res int32, more bool) int {
	if res >= 0 {
		d.emit(fn, o.tag, res, true, nil)
		if more {
			return 1
		}
		return 1 + d.rearmOrEnd(fn, idx, o)
	}
	if more {
		return 0
	}
	return d.final(fn, idx, o, res)
}
