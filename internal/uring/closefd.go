//go:build linux && cgo && !ringloop_nouring

package uring

import (
	"github.com/ringloop/ringloop/internal/driver"
	"github.com/ringloop/ringloop/internal/liburing"
)

// CloseFD closes fd through the ring (CLOSE, 5.6) and reports close(2)'s
// result as the op's final completion.
func (d *Driver) CloseFD(fd int, t driver.Tag) {
	if idx, o, ok := d.begin(kindClose, fd, t); ok {
		d.sqe(idx, o, liburing.IORingOpClose)
	}
}
