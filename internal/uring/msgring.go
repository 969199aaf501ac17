//go:build linux && cgo && !ringloop_nouring

package uring

import (
	"errors"
	"fmt"

	"github.com/ringloop/ringloop/internal/driver"
	"github.com/ringloop/ringloop/internal/liburing"
)

// MsgRing posts a completion {Tag: t, Res: res} on target's ring with
// IORING_OP_MSG_RING (5.18), for loop-to-loop handoff without an eventfd:
// target's Wait reports it like any other completion (driver.Messenger).
// The message is sent with this driver's next Wait (call it from this
// driver's loop); this driver then reports {Tag: done, Res: 0} once it is
// posted, or the errno the kernel refused it with, so that what the message
// carried (an fd) is never lost. It fails at once with
// errors.ErrUnsupported when the kernel or profile lacks MSG_RING, and when
// target is not an io_uring driver, not started or closed; the caller then
// uses a task ring and Wake instead. The engine keeps t and done unique as
// for any op. Target's ring fd is read now: target must not close
// its ring until the done completion.
func (d *Driver) MsgRing(to driver.Driver, t driver.Tag, res int32, done driver.Tag) error {
	target, _ := to.(*Driver)
	switch {
	case d.closed.Load():
		return driver.ErrClosed
	case !d.feat.MsgRing:
		return fmt.Errorf("uring: MSG_RING needs kernel 5.18 (profile %s): %w", d.profile, errors.ErrUnsupported)
	case t&driver.Reserved != 0:
		return fmt.Errorf("uring: MSG_RING tag %#x uses the reserved bit", uint64(t))
	case target == nil:
		return fmt.Errorf("uring: MSG_RING target is a %s driver: %w", to.Name(), errors.ErrUnsupported)
	case target.closed.Load():
		return fmt.Errorf("uring: MSG_RING target: %w", driver.ErrClosed)
	case !target.enabled.Load():
		return errors.New("uring: MSG_RING target ring not enabled yet (its loop has not started)")
	}
	idx, o := d.ops.alloc(kindMsgRing, -1, done)
	q := d.sqe(idx, o, liburing.IORingOpMsgRing)
	q.FD = target.ringFD.Load()
	q.Len = uint32(res)
	q.Off = uint64(t)
	return nil
}

// onMsgRing handles the sender's completion of a MSG_RING: it reports
// whether the message was posted (a refused one is counted).
func (d *Driver) onMsgRing(fn func(*driver.Completion), idx int32, o *op, c *liburing.CQE) int {
	if c.Res < 0 {
		d.stats.MsgRingFailed++
	}
	return d.final(fn, idx, o, c.Res)
}
