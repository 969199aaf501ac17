package loopgroup_test

import (
	"syscall"

	"golang.org/x/sys/unix"
)

func getsockoptNoDelay(fd int) (int, error) {
	return unix.GetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY)
}

func errConnRefused() error { return syscall.ECONNREFUSED }
