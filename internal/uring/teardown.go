//go:build linux && cgo && !ringloop_nouring

package uring

import (
	"runtime"
	"time"

	"github.com/ringloop/ringloop/internal/driver"
	"github.com/ringloop/ringloop/internal/liburing"
	"golang.org/x/sys/unix"
)

// drainTimeout bounds how long Close waits for the kernel to
// hand back cancelled requests.
const drainTimeout = 2 * time.Second

// Close releases everything: the ring, the eventfd, buffers and mmaps. Ops
// still armed are dropped without completions. Called on the loop's thread
// (as it should be), it first cancels what is in flight and waits for the
// kernel to let go of the memory, closing connections that were accepted
// but never reported. Called from a Wait callback, it takes effect when
// that Wait returns.
func (d *Driver) Close() error {
	if d.closed.Swap(true) {
		return nil
	}
	d.wakeMu.Lock()
	wfd := d.wakeFD
	d.wakeFD = -1
	d.wakeMu.Unlock()
	if wfd >= 0 {
		defer unix.Close(wfd) // after the ring: its read holds the file anyway
	}
	if d.inWait {
		d.closeLater = true
		return nil
	}
	d.closeNow()
	return nil
}

func (d *Driver) closeNow() {
	d.closeLater = false
	settled := d.ring == nil || !d.enabled.Load() // nothing ever reached the kernel
	if !settled && d.canSubmit() {
		settled = d.drain(drainTimeout)
	}
	if !settled {
		d.quarantineAll() // the kernel may still use it (quarantine.go)
	}
	d.release()
}

// canSubmit reports whether this thread may submit to the ring.
func (d *Driver) canSubmit() bool {
	return d.setupFlags&liburing.SetupSingleIssuer == 0 || unix.Gettid() == d.tid
}

// drain hands the queued SQEs to the kernel, cancels every request
// the kernel holds and reaps until they have all ended (or the timeout
// passes), closing accepted fds that nobody will see. Nothing is reported.
// It says whether every request ended.
func (d *Driver) drain(timeout time.Duration) bool {
	for ; d.cqHead < d.cqTail; d.cqHead++ { // left by a callback (handleCQEs)
		d.drop(&d.cqes[d.cqHead])
	}
	for ci, ch := range d.ops.chunks {
		for i := range ch {
			o := &ch[i]
			if !o.inUse {
				continue
			}
			idx := int32(ci*opChunk + i)
			if o.state != stLive {
				d.ops.release(idx, o)
				continue
			}
			d.pushCancel(ud(idx, o.gen))
		}
	}
	if d.wakeArm {
		d.pushCancel(udWake)
	}
	deadline := time.Now().Add(timeout)
	for d.ops.live > 0 || d.wakeArm {
		left := time.Until(deadline)
		if left <= 0 {
			return false
		}
		n, err := d.run(int64(min(left, 50*time.Millisecond)), len(d.cqes))
		d.nsq = 0 // nothing new goes in
		if err != nil {
			return false
		}
		for i := 0; i < n; i++ {
			d.drop(&d.cqes[i])
		}
	}
	return true
}

// drop accounts for one CQE while draining.
func (d *Driver) drop(c *liburing.CQE) {
	u := c.UserData
	if u == udWake {
		d.wakeArm = false
		return
	}
	if u&udReserved == 0 || u&udOpBit == 0 || u == liburing.TimeoutUserData {
		return
	}
	idx := int32(uint32(u))
	if idx < 0 || idx >= d.ops.n {
		return
	}
	o := d.ops.at(idx)
	if !o.inUse || o.gen != uint32(u>>32)&uint32(udGenMask) {
		return
	}
	if o.kind == kindAccept && c.Res >= 0 {
		unix.Close(int(c.Res))
	}
	if c.Flags&liburing.CQEFMore == 0 {
		d.ops.release(idx, o)
	}
}

// release frees the ring and all memory; used by Close and a failed New.
func (d *Driver) release() {
	if d.ring != nil {
		d.ring.Close()
		d.ring = nil
	}
	d.ops.freeAll()
	d.bufs.free()
	d.dgram.free()
	if d.misc != nil {
		unix.Munmap(d.misc)
		d.misc = nil
	}
	if d.batch != nil {
		d.batch.Free()
		d.batch = nil
		d.sq, d.rets, d.cqes = nil, nil, nil
	}
	d.synth, d.parked = nil, nil
	if d.wakeFD >= 0 { // New failed after creating it
		unix.Close(d.wakeFD)
		d.wakeFD = -1
	}
	runtime.KeepAlive(d)
}

var _ driver.Driver = (*Driver)(nil)
