//go:build linux && cgo && !ringloop_nouring

package uring

import (
	"errors"
	"fmt"
	"time"

	"github.com/ringloop/ringloop/cgo/liburing"
	"github.com/ringloop/ringloop/driver"
	"golang.org/x/sys/unix"
)

// stashed is a completion reaped while rebuilding, reported by the next Wait.
type stashed struct {
	tag  driver.Tag
	res  int32
	more bool
	data []byte // a copy: the buffer went back to the kernel
}

// Rebuild replaces the ring with a new one keeping every armed op. The old
// ring's requests are cancelled and reaped (results that arrive meanwhile
// are reported by the next Wait); the cancelled ones are re-armed on the new
// ring with the same tags. Connects, closes, no-ops and MSG_RINGs are left to
// finish on their own. If the old ring does not hand everything back within a bounded
// time, Rebuild gives up, keeps the old ring (whose ops stay armed) and says
// so. Call it on the loop's thread, between Waits; other loops' MSG_RINGs in
// flight to the old ring are lost.
func (d *Driver) Rebuild() error {
	switch {
	case d.closed.Load():
		return driver.ErrClosed
	case d.inWait:
		return errors.New("uring: Rebuild from a Wait callback")
	case !d.enabled.Load():
		return nil // nothing is in the kernel yet
	case !d.canSubmit():
		return errWrongThread
	}
	// The new ring comes first, lent the receive buffers and enabled: if
	// any of that fails, nothing has been cancelled and the old ring goes
	// on as it was.
	r, bufRing, err := d.prepareRing()
	if err != nil {
		return err
	}
	old := d.ring
	d.stashing = true
	defer func() { d.stashing = false }()

	// Mark every request the old ring holds (or will, once the queued
	// descriptors go in), and cancel those that can be re-armed.
	d.rebuildPending = 0
	for ci, ch := range d.ops.chunks {
		for i := range ch {
			o := &ch[i]
			if !o.inUse || o.state != stLive {
				continue
			}
			o.rebuild = true
			d.rebuildPending++
			switch o.kind {
			case kindConnect, kindClose, kindNop, kindMsgRing:
				continue
			}
			q := d.push()
			q.Opcode = liburing.OpCancel
			q.Addr = ud(int32(ci*opChunk+i), o.gen)
			q.UserData = udCancel
		}
	}
	d.wakeOld = d.wakeArm
	if d.wakeArm {
		q := d.push()
		q.Opcode = liburing.OpCancel
		q.Addr = udWake
		q.UserData = udCancel
	}

	// Reap. The first Run submits everything queued; later ones submit
	// nothing, so that re-arms pile up for the new ring.
	deadline := time.Now().Add(drainTimeout)
	first := true
	for d.rebuildPending > 0 || d.wakeOld {
		left := time.Until(deadline)
		if left <= 0 {
			discardRing(r, bufRing)
			return fmt.Errorf("uring: Rebuild: %d requests still in the old ring after %v; keeping it", d.rebuildPending, drainTimeout)
		}
		nops, nret := 0, 0
		if first {
			nops, nret = d.nsq, d.nret
		}
		woke := false
		d.handleCQEs(nil, &woke) // stashed, like the old ring's results
		n, rest, err := old.Run(d.batch, nops, nret, int64(min(left, 50*time.Millisecond)), len(d.cqes))
		if first {
			d.nsq, d.nret, first = rest, 0, false
		}
		if err != nil {
			discardRing(r, bufRing)
			return fmt.Errorf("uring: Rebuild: reaping the old ring: %w", err)
		}
		for i := 0; i < n; i++ {
			d.handle(&d.cqes[i], nil, &woke)
		}
	}

	// Swap rings. The old one goes first: it pins the old buffer ring.
	rs := old.Stats()
	d.stats.Enters += rs.Enters
	d.stats.Submitted += rs.Submitted
	d.stats.Completions += rs.Completions
	d.stats.SQFull += rs.SQFull
	d.stats.Overflow += rs.Overflow
	d.stats.EINTR += rs.EINTR
	d.stats.Silent += rs.Silent
	d.stats.SilentErr += rs.SilentErr
	old.Close()
	if d.bufs.ring != nil {
		unix.Munmap(d.bufs.ring)
	}
	d.bufs.ring = bufRing
	d.ring = r
	d.ringFD.Store(int32(r.FD()))
	r.SetExtArg(d.feat.ExtArg)
	d.restartBuffers()
	d.tid = unix.Gettid()
	d.stats.Rebuilds++
	return nil
}

// prepareRing makes Rebuild's new ring: set up, its buffer ring registered
// (for the buffer-ring receive modes) and enabled on this thread.
func (d *Driver) prepareRing() (*liburing.Ring, []byte, error) {
	r, err := setupRing(d.entries, d.cqEntries, d.setupFlags)
	if err != nil {
		return nil, nil, fmt.Errorf("uring: Rebuild: %w", setupError(err))
	}
	var bufRing []byte
	if d.recv == recvMultiRing || d.recv == recvSingleRing {
		if bufRing, _, err = d.bufs.newRing(r); err != nil {
			r.Close()
			return nil, nil, fmt.Errorf("uring: Rebuild: buffer ring: %w; keeping the old ring", err)
		}
	}
	if d.setupFlags&liburing.SetupRDisabled != 0 {
		if err := r.Enable(); err != nil {
			discardRing(r, bufRing)
			return nil, nil, fmt.Errorf("uring: Rebuild: enable ring: %w; keeping the old ring", err)
		}
	}
	if err := d.registerParkFD(r); err != nil {
		discardRing(r, bufRing)
		return nil, nil, fmt.Errorf("uring: Rebuild: %w; keeping the old ring", err)
	}
	return r, bufRing, nil
}

// discardRing drops a ring prepareRing made that will not be used.
func discardRing(r *liburing.Ring, bufRing []byte) {
	r.Close()
	if bufRing != nil {
		unix.Munmap(bufRing)
	}
}

// restartBuffers lends every receive buffer to the new ring: nothing is in
// the old kernel any more and stashed data was copied.
func (d *Driver) restartBuffers() {
	b := &d.bufs
	switch d.recv {
	case recvMultiRing, recvSingleRing:
		d.ring.SetBufRing(uintptr(ptr(b.ring)), b.base(), uint32(b.size), b.entries)
		for i := 0; i < b.count; i++ {
			d.rets[i] = uint16(i)
		}
		d.nret = b.count
	case recvSingleGroup:
		// Drop queued provides and put one for all buffers first.
		n := 0
		for i := 0; i < d.nsq; i++ {
			if d.sq[i].Opcode != liburing.OpProvideBuffers {
				d.sq[n] = d.sq[i]
				n++
			}
		}
		d.nsq = n
		d.push()
		copy(d.sq[1:d.nsq], d.sq[:d.nsq-1])
		q := &d.sq[0]
		*q = liburing.Op{}
		q.Opcode = liburing.OpProvideBuffers
		q.Addr = uint64(b.base())
		q.Len = uint32(b.size)
		q.FD = int32(b.count)
		q.BufGroup = b.bgid
		q.UserData = udProvide
	}
}

// deliverStash reports what Rebuild reaped.
func (d *Driver) deliverStash(fn func(*driver.Completion)) int {
	n := len(d.stash)
	for i := range d.stash {
		s := &d.stash[i]
		d.emit(fn, s.tag, s.res, s.more, s.data)
		s.data = nil
	}
	d.stash = d.stash[:0]
	return n
}
