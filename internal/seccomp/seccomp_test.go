package seccomp

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/ringloop/ringloop/internal/uringcheck"
)

// ioUringSetup calls io_uring_setup(4, &params) directly.
func ioUringSetup() (int, unix.Errno) {
	var params [15]uint64 // struct io_uring_params: 120 bytes
	fd, _, e := unix.Syscall(unix.SYS_IO_URING_SETUP, 4, uintptr(unsafe.Pointer(&params)), 0)
	return int(fd), e
}

// TestHelperProcess is the child's side of TestDenyIOUringInChild: it does
// nothing unless ChildEnv is set.
func TestHelperProcess(t *testing.T) {
	// A thread that exists before the filter: TSYNC must cover it.
	ask, answer := make(chan struct{}), make(chan unix.Errno)
	go func() {
		runtime.LockOSThread()
		<-ask
		_, e := ioUringSetup()
		answer <- e
	}()
	installed, err := InstallFromEnv()
	if err != nil {
		t.Fatal(err)
	}
	if !installed {
		close(ask)
		<-answer
		return
	}
	want := errnoByName(os.Getenv(ChildEnv))
	if fd, e := ioUringSetup(); e != want {
		if e == 0 {
			unix.Close(fd)
		}
		t.Fatalf("io_uring_setup under the filter: %v, want %v", e, want)
	}
	close(ask)
	if e := <-answer; e != want {
		t.Fatalf("io_uring_setup on a thread started before the filter: %v, want %v", e, want)
	}
	for _, nr := range []uintptr{unix.SYS_IO_URING_ENTER, unix.SYS_IO_URING_REGISTER} {
		// fd -1 would give EBADF if the call reached the kernel.
		if _, _, e := unix.Syscall6(nr, ^uintptr(0), 0, 0, 0, 0, 0); e != want {
			t.Fatalf("syscall %d under the filter: %v, want %v", nr, e, want)
		}
	}
	// Everything else still works.
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(status), "Seccomp:\t2") || !strings.Contains(string(status), "NoNewPrivs:\t1") {
		t.Fatal("/proc/self/status does not show the filter")
	}
	ep, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		t.Fatalf("epoll_create1 under the filter: %v", err)
	}
	unix.Close(ep)
	fmt.Printf("io_uring_setup: %s\n", unix.ErrnoName(want))
}

// TestDenyIOUringInChild re-runs this binary under the filter, once per
// errno a real refusal uses.
func TestDenyIOUringInChild(t *testing.T) {
	for _, errno := range []unix.Errno{unix.EPERM, unix.ENOSYS} {
		cmd, err := ChildCommand(errno, "^TestHelperProcess$")
		if err != nil {
			t.Fatal(err)
		}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("child (%v): %v\n%s", errno, err, out)
		}
		if want := "io_uring_setup: " + unix.ErrnoName(errno); !strings.Contains(string(out), want) {
			t.Fatalf("child (%v) output lacks %q:\n%s", errno, want, out)
		}
	}
}

// TestIOUringWithoutFilter: here, without the filter, io_uring_setup works,
// so the child's refusal is the filter's doing.
func TestIOUringWithoutFilter(t *testing.T) {
	uringcheck.Need(t) // where the host refuses io_uring, that is no test of the filter
	fd, e := ioUringSetup()
	if e != 0 {
		t.Fatalf("io_uring_setup without a filter: %v", e)
	}
	unix.Close(fd)
}

// TestInvalidErrno: bad errnos are refused before anything is installed.
func TestInvalidErrno(t *testing.T) {
	for _, e := range []unix.Errno{0, 0x10000} {
		if err := DenyIOUring(e); err == nil {
			t.Fatalf("DenyIOUring(%d) accepted", int(e))
		}
	}
	if _, err := ChildCommand(unix.Errno(4000), "x"); err == nil {
		t.Fatal("ChildCommand accepted an errno without a name")
	}
	t.Setenv(ChildEnv, "NOTANERRNO")
	if ok, err := InstallFromEnv(); ok || err == nil {
		t.Fatalf("InstallFromEnv with a bad name: %v %v", ok, err)
	}
}

// TestProgramShape checks the filter's jumps land inside the program and on
// return instructions.
func TestProgramShape(t *testing.T) {
	for _, arch := range []uint32{unix.AUDIT_ARCH_X86_64, unix.AUDIT_ARCH_AARCH64} {
		p := program(arch, unix.EPERM)
		for i, ins := range p {
			if ins.Code&0x07 != unix.BPF_JMP {
				continue
			}
			for _, off := range []uint8{ins.Jt, ins.Jf} {
				dst := i + 1 + int(off)
				if dst >= len(p) {
					t.Fatalf("arch %#x: jump at %d leaves the program", arch, i)
				}
			}
			if tgt := p[i+1+int(ins.Jt)]; ins.K != arch && tgt.Code != unix.BPF_RET|unix.BPF_K {
				t.Fatalf("arch %#x: io_uring match at %d does not jump to a return", arch, i)
			}
		}
		if last := p[len(p)-1]; last.K != unix.SECCOMP_RET_ERRNO|uint32(unix.EPERM) {
			t.Fatalf("deny returns %#x", last.K)
		}
	}
}
