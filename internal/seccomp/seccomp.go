// Package seccomp installs a seccomp-BPF filter that refuses io_uring, the
// way container runtimes and old kernels do, so tests can prove that ringloop
// falls back to epoll and says why. It is pure Go (prctl and seccomp through
// golang.org/x/sys/unix) and works with CGO_ENABLED=0.
//
// A filter cannot be removed: it binds the whole process (every thread,
// through SECCOMP_FILTER_FLAG_TSYNC) and the children it starts. Tests
// therefore install it in a child process: ChildCommand re-executes the
// current test binary with ChildEnv set, and the child's test calls
// InstallFromEnv first.
package seccomp

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The io_uring system calls; their numbers are the same on every
// architecture (they arrived after the syscall tables were unified).
const (
	sysIOUringSetup    = 425
	sysIOUringEnter    = 426
	sysIOUringRegister = 427
)

// x32Bit marks x32-ABI system call numbers on x86-64; the filter ignores it
// so io_uring is refused under that ABI too.
const x32Bit = 0x40000000

// offsets into struct seccomp_data.
const (
	offNr   = 0
	offArch = 4
)

// ErrUnsupportedArch is returned on architectures the filter does not know.
var ErrUnsupportedArch = errors.New("seccomp: unsupported architecture " + runtime.GOARCH)

// auditArch returns the AUDIT_ARCH value of the running binary's native
// system calls.
func auditArch() (uint32, error) {
	switch runtime.GOARCH {
	case "amd64":
		return unix.AUDIT_ARCH_X86_64, nil
	case "arm64":
		return unix.AUDIT_ARCH_AARCH64, nil
	}
	return 0, ErrUnsupportedArch
}

func stmt(code uint16, k uint32) unix.SockFilter { return unix.SockFilter{Code: code, K: k} }

func jeq(k uint32, jt, jf uint8) unix.SockFilter {
	return unix.SockFilter{Code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, Jt: jt, Jf: jf, K: k}
}

// program builds the filter: system calls of another architecture (compat
// ABIs, which Go programs do not use) are allowed untouched; native
// io_uring_setup, io_uring_enter and io_uring_register fail with errno;
// everything else is allowed.
func program(arch uint32, errno unix.Errno) []unix.SockFilter {
	deny := unix.SECCOMP_RET_ERRNO | (uint32(errno) & unix.SECCOMP_RET_DATA)
	mask := ^uint32(0)
	if arch == unix.AUDIT_ARCH_X86_64 {
		mask = ^uint32(x32Bit)
	}
	return []unix.SockFilter{
		stmt(unix.BPF_LD|unix.BPF_W|unix.BPF_ABS, offArch), // 0
		jeq(arch, 0, 5), // 1: other arch → 7 allow
		stmt(unix.BPF_LD|unix.BPF_W|unix.BPF_ABS, offNr),      // 2
		stmt(unix.BPF_ALU|unix.BPF_AND|unix.BPF_K, mask),      // 3
		jeq(sysIOUringSetup, 3, 0),                            // 4 → 8 deny
		jeq(sysIOUringEnter, 2, 0),                            // 5 → 8 deny
		jeq(sysIOUringRegister, 1, 0),                         // 6 → 8 deny
		stmt(unix.BPF_RET|unix.BPF_K, unix.SECCOMP_RET_ALLOW), // 7
		stmt(unix.BPF_RET|unix.BPF_K, deny),                   // 8
	}
}

// DenyIOUring makes io_uring_setup, io_uring_enter and io_uring_register
// fail with errno in every thread of this process from now on (EPERM as
// Docker's default profile and kernel.io_uring_disabled do, ENOSYS as a
// kernel without io_uring does), leaving every other system call alone. It
// cannot be undone.
func DenyIOUring(errno unix.Errno) error {
	if errno == 0 || uint32(errno) > unix.SECCOMP_RET_DATA {
		return fmt.Errorf("seccomp: invalid errno %d", int(errno))
	}
	arch, err := auditArch()
	if err != nil {
		return err
	}
	filter := program(arch, errno)
	prog := unix.SockFprog{Len: uint16(len(filter)), Filter: &filter[0]}

	// NO_NEW_PRIVS must hold on the thread that installs the filter; TSYNC
	// then sets it, with the filter, on every other thread.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("seccomp: prctl(PR_SET_NO_NEW_PRIVS): %w", err)
	}
	r, _, e := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_TSYNC,
		uintptr(unsafe.Pointer(&prog)))
	runtime.KeepAlive(filter)
	if e != 0 {
		return fmt.Errorf("seccomp: seccomp(SET_MODE_FILTER, TSYNC): %w", e)
	}
	if r != 0 {
		return fmt.Errorf("seccomp: thread %d could not be synchronised", r)
	}
	return nil
}

// ChildEnv names the environment variable through which ChildCommand asks
// the child to install the filter; its value is the errno name ("EPERM",
// "ENOSYS").
const ChildEnv = "RINGLOOP_SECCOMP_DENY_IOURING"

// ChildCommand returns a command that re-runs the current test binary with
// only the tests matching run (a -test.run pattern), asking it through
// ChildEnv to refuse io_uring with errno. The child's test must call
// InstallFromEnv before anything else.
func ChildCommand(errno unix.Errno, run string) (*exec.Cmd, error) {
	name := unix.ErrnoName(errno)
	if name == "" {
		return nil, fmt.Errorf("seccomp: errno %d has no name", int(errno))
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("seccomp: %w", err)
	}
	cmd := exec.Command(exe, "-test.run="+run, "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), ChildEnv+"="+name)
	return cmd, nil
}

// InstallFromEnv installs the filter ChildEnv asks for and reports whether
// it did; with ChildEnv unset (not a child) it does nothing.
func InstallFromEnv() (bool, error) {
	name := os.Getenv(ChildEnv)
	if name == "" {
		return false, nil
	}
	errno := errnoByName(name)
	if errno == 0 {
		return false, fmt.Errorf("seccomp: %s=%q is not an errno name", ChildEnv, name)
	}
	return true, DenyIOUring(errno)
}

// errnoByName maps "EPERM" to unix.EPERM (0 when unknown).
func errnoByName(name string) unix.Errno {
	for e := unix.Errno(1); e < 4096; e++ {
		if unix.ErrnoName(e) == name {
			return e
		}
	}
	return 0
}
