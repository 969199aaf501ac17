//go:build linux && cgo && !ringloop_nouring

package uring

import (
	"encoding/binary"

	"github.com/ringloop/ringloop/internal/driver"
	"github.com/ringloop/ringloop/internal/liburing"
)

// Poll keeps reporting fd's readiness for events until cancelled (multishot
// poll, or a single-shot poll re-armed after each result); report (wait.go)
// hands its results over.
func (d *Driver) Poll(fd int, t driver.Tag, events uint32) {
	if idx, o, ok := d.begin(kindPoll, fd, t); ok {
		o.events = events
		d.armPoll(idx, o)
	}
}

func (d *Driver) armPoll(idx int32, o *op) {
	q := d.sqe(idx, o, liburing.IORingOpPollAdd)
	q.OpFlags = poll32(o.events)
	if d.feat.MultishotPoll {
		q.Len = liburing.PollAddMulti
	}
	o.state, o.multi = stLive, d.feat.MultishotPoll
}

// poll32 is a poll mask as the SQE's poll32_events field holds it: the
// kernel reads its two 16-bit halves swapped on big-endian machines (as
// liburing's prep helper writes it).
func poll32(mask uint32) uint32 {
	if bigEndian {
		return mask<<16 | mask>>16
	}
	return mask
}

var bigEndian = binary.NativeEndian.Uint16([]byte{0, 1}) == 1
