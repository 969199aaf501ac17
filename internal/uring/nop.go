//go:build linux && cgo && !ringloop_nouring

package uring

import (
	"github.com/ringloop/ringloop/internal/driver"
	"github.com/ringloop/ringloop/internal/liburing"
)

// Nop queues a no-op that completes with Res 0 under t. It measures the
// driver's per-op cost and can serve as a completion-ordered marker.
func (d *Driver) Nop(t driver.Tag) {
	if idx, o, ok := d.begin(kindNop, -1, t); ok {
		d.sqe(idx, o, liburing.IORingOpNop)
	}
}
