package epoll

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// Raw wrappers: no Sockaddr decoding, no allocation, errno as a value.
//
// The calls that cannot block (non-blocking socket calls, epoll_wait with
// a zero timeout) use RawSyscall6: they skip the scheduler's
// entersyscall/exitsyscall hand-off, which measurably costs on every op
// (about 8% of a loopback send/receive pair here). Only a wait that may
// block goes through Syscall6, so the runtime can run other goroutines.

func recvRaw(fd int, p []byte) (int, unix.Errno) {
	n, _, e := unix.RawSyscall6(unix.SYS_RECVFROM, uintptr(fd), uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)),
		unix.MSG_DONTWAIT, 0, 0)
	return int(n), e
}

func sendRaw(fd int, p []byte) (int, unix.Errno) {
	var ptr unsafe.Pointer
	if len(p) > 0 {
		ptr = unsafe.Pointer(&p[0])
	}
	n, _, e := unix.RawSyscall6(unix.SYS_SENDTO, uintptr(fd), uintptr(ptr), uintptr(len(p)),
		unix.MSG_DONTWAIT|unix.MSG_NOSIGNAL, 0, 0)
	return int(n), e
}

func accept4Raw(fd int) (int, unix.Errno) {
	n, _, e := unix.RawSyscall6(unix.SYS_ACCEPT4, uintptr(fd), 0, 0,
		unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0, 0)
	return int(n), e
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
