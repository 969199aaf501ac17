//go:build linux && cgo && !ringloop_nouring

package uring

import (
	"errors"
	"fmt"

	"github.com/ringloop/ringloop/internal/driver"
	"golang.org/x/sys/unix"
)

// setupMeaning explains the errno of a failed io_uring_setup to an operator.
func setupMeaning(err error) string {
	switch {
	case errors.Is(err, unix.EPERM):
		return "blocked by seccomp or kernel.io_uring_disabled"
	case errors.Is(err, unix.ENOSYS):
		return "kernel without io_uring"
	case errors.Is(err, unix.ENOMEM):
		return "RLIMIT_MEMLOCK too small (kernels before 5.12)"
	case errors.Is(err, unix.EINVAL):
		return "ring parameters refused (entries too large or flags unknown)"
	case errors.Is(err, unix.EMFILE), errors.Is(err, unix.ENFILE):
		return "out of file descriptors"
	}
	return "unexpected error"
}

// setupError wraps a failed io_uring_setup so that both
// errors.Is(err, driver.ErrUringUnavailable) and errors.Is(err, errno) hold,
// and the message carries the errno and its meaning.
func setupError(err error) error {
	return fmt.Errorf("%w: io_uring_setup: %w (%s)", driver.ErrUringUnavailable, err, setupMeaning(err))
}
