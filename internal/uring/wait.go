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

// run is the cgo call: buffer returns, SQEs, submit, wait, copy out.
func (d *Driver) run(timeout int64, maxCQE int) (int, error) {
	d.stats.Runs++
	if len(d.dgram.rets) > 0 {
		d.dgram.give() // its own ring: one more cgo call, in iterations that received datagrams
	}
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
// it reported: a message from another loop, the driver's own (the wake;
// cancels and timeouts are dropped), or an op's, which its kind handles
// (completes, variants.go).
func (d *Driver) handle(c *liburing.CQE, fn func(*driver.Completion), woke *bool) int {
	u := c.UserData
	if u&udReserved == 0 { // MSG_RING from another loop: an engine tag
		d.emit(fn, driver.Tag(u), c.Res, false, nil)
		return 1
	}
	if u&udOpBit == 0 || u == liburing.TimeoutUserData {
		if u == udWake {
			d.onWake(woke)
		}
		return 0 // cancel results, timeouts
	}
	idx := int32(uint32(u))
	gen := uint32(u>>32) & uint32(udGenMask)
	if idx < 0 || idx >= d.ops.n {
		return 0
	}
	o := d.ops.at(idx)
	if !o.inUse || o.gen != gen || o.state != stLive {
		if c.Flags&liburing.CQEFBuffer != 0 { // a stale op's buffer still goes back
			d.giveBack(uint16(c.Flags >> liburing.CQEBufferShift))
		}
		return 0
	}
	if c.Flags&liburing.CQEFMore == 0 {
		o.state = stEnded
	}
	if complete := completes[o.kind]; complete != nil {
		return complete(d, fn, idx, o, c)
	}
	return d.final(fn, idx, o, c.Res) // the op's only result
}

// rearmOrEnd follows a successful result whose SQE has ended: the op goes
// on (re-armed) unless it was cancelled meanwhile.
func (d *Driver) rearmOrEnd(fn func(*driver.Completion), idx int32, o *op) int {
	if o.cancel {
		return d.final(fn, idx, o, eCanceled)
	}
	rearms[o.kind](d, idx, o)
	return 0
}

// report hands over a result of an op that keeps going (multishot, or
// re-armed single-shot): a success goes on, re-armed when its SQE ended; an
// error the op's SQE survives is dropped, one that ended it is final.
func (d *Driver) report(fn func(*driver.Completion), idx int32, o *op, c *liburing.CQE) int {
	res, more := c.Res, c.Flags&liburing.CQEFMore != 0
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
