package epoll

import (
	"fmt"
	"math"
	"time"
	"unsafe"

	"github.com/ringloop/ringloop/internal/driver"
	"golang.org/x/sys/unix"
)

// probeTimeout decides how Wait times out: epoll_pwait2's nanoseconds where
// the kernel has it and the profile allows it (5.11), else epoll_wait's
// whole milliseconds, rounded up.
func (d *Driver) probeTimeout(f *driver.Features) string {
	if !d.cfg.Profile.AtLeast(5, 11) {
		return fmt.Sprintf("wait: epoll_wait, timeouts rounded up to whole ms (profile %s predates epoll_pwait2, 5.11)", d.cfg.Profile)
	}
	if errno := d.pwait2Probe(); errno != 0 {
		return fmt.Sprintf("wait: epoll_wait, timeouts rounded up to whole ms (epoll_pwait2: %s)", errnoName(errno))
	}
	d.pwait2 = true
	f.EpollPwait2 = true
	return "wait: epoll_pwait2, nanosecond timeouts"
}

// pwait2Probe calls epoll_pwait2 with a zero timeout and returns its errno.
func (d *Driver) pwait2Probe() unix.Errno {
	d.ts = unix.Timespec{}
	_, errno := epollPwait2Raw(d.epfd, d.events[:1], &d.ts)
	return errno
}

// epollWait waits for events: nanosecond timeouts through epoll_pwait2,
// else whole milliseconds rounded up.
func (d *Driver) epollWait(timeout time.Duration) (int, unix.Errno) {
	var n int
	var errno unix.Errno
	switch {
	case timeout < 0:
		n, errno = epollWaitRaw(d.epfd, d.events, -1)
	case timeout == 0:
		n, errno = epollWaitRaw(d.epfd, d.events, 0)
	case d.pwait2:
		d.ts = unix.NsecToTimespec(int64(timeout))
		n, errno = epollPwait2Raw(d.epfd, d.events, &d.ts)
	default:
		ms := (timeout + time.Millisecond - 1) / time.Millisecond
		if ms > math.MaxInt32 {
			ms = math.MaxInt32
		}
		n, errno = epollWaitRaw(d.epfd, d.events, int(ms))
	}
	return n, errno
}

// epollWaitRaw runs epoll_pwait with no signal mask (epoll_wait on every
// architecture, including those without the epoll_wait system call).
func epollWaitRaw(epfd int, ev []unix.EpollEvent, msec int) (int, unix.Errno) {
	if msec == 0 {
		n, _, e := unix.RawSyscall6(unix.SYS_EPOLL_PWAIT, uintptr(epfd), uintptr(unsafe.Pointer(&ev[0])), uintptr(len(ev)),
			0, 0, 0)
		return int(n), e
	}
	n, _, e := unix.Syscall6(unix.SYS_EPOLL_PWAIT, uintptr(epfd), uintptr(unsafe.Pointer(&ev[0])), uintptr(len(ev)),
		uintptr(msec), 0, 0)
	return int(n), e
}

// epollPwait2Raw runs epoll_pwait2 with timeout ts and no signal mask.
func epollPwait2Raw(epfd int, ev []unix.EpollEvent, ts *unix.Timespec) (int, unix.Errno) {
	n, _, e := unix.Syscall6(unix.SYS_EPOLL_PWAIT2, uintptr(epfd), uintptr(unsafe.Pointer(&ev[0])), uintptr(len(ev)),
		uintptr(unsafe.Pointer(ts)), 0, 0)
	return int(n), e
}
