//go:build linux && cgo && !ringloop_nouring

package uring

import (
	"unsafe"

	"github.com/ringloop/ringloop/internal/driver"
	"github.com/ringloop/ringloop/internal/liburing"
	"golang.org/x/sys/unix"
)

// Connect connects the non-blocking socket fd to sa; the raw sockaddr lives
// outside the Go heap until the completion, which is the op's final result
// (CONNECT, 5.6, on every kernel the driver runs on).
func (d *Driver) Connect(fd int, t driver.Tag, sa unix.Sockaddr) {
	idx, o, ok := d.begin(kindConnect, fd, t)
	if !ok {
		return
	}
	raw, err := d.ops.sockaddr(idx)
	if err != nil {
		d.finish(idx, o, -int32(unix.ENOMEM))
		return
	}
	n, err := encodeSockaddr(sa, raw)
	if err != nil {
		d.finish(idx, o, -int32(err.(unix.Errno)))
		return
	}
	q := d.sqe(idx, o, liburing.IORingOpConnect)
	q.Addr = uint64(uintptr(unsafe.Pointer(&raw[0])))
	q.Off = uint64(n)
}
