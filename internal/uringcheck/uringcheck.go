// Package uringcheck tells tests, once per process, whether io_uring can run
// on this host (a container's seccomp profile, kernel.io_uring_disabled or a
// kernel without it may refuse it) and whether it must (RequireEnv, which CI
// sets). Where io_uring cannot run, its tests skip with one line saying why,
// and the epoll half of the suite still runs; where it must run, that skip
// becomes a failure. It is pure Go (the probe is a raw io_uring_setup), so
// the io_uring driver's own in-package tests can use it too.
package uringcheck

import (
	"fmt"
	"os"
	"sync"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// RequireEnv names the environment variable that makes io_uring mandatory
// in tests: set to 1, a host where io_uring cannot run fails them.
const RequireEnv = "RINGLOOP_REQUIRE_URING"

// probe sets up (and closes at once) a small ring and returns why that
// failed, or "".
var probe = sync.OnceValue(func() string {
	var params [15]uint64 // struct io_uring_params: 120 bytes
	fd, _, e := unix.Syscall(unix.SYS_IO_URING_SETUP, 4, uintptr(unsafe.Pointer(&params)), 0)
	if e == 0 {
		unix.Close(int(fd))
		return ""
	}
	why := ""
	switch e {
	case unix.EPERM:
		why = ": refused by a seccomp filter or kernel.io_uring_disabled"
	case unix.ENOSYS:
		why = ": a kernel without io_uring"
	}
	return fmt.Sprintf("io_uring_setup: %s (%s)%s", e.Error(), unix.ErrnoName(e), why)
})

// Unavailable returns why io_uring cannot run here, or "" when it can.
func Unavailable() string { return probe() }

// Required reports whether RequireEnv makes io_uring mandatory.
func Required() bool {
	v := os.Getenv(RequireEnv)
	return v != "" && v != "0"
}

// Status is the one line a test run prints about io_uring on this host.
func Status() string {
	why := Unavailable()
	switch {
	case why == "":
		return "io_uring: available"
	case Required():
		return "io_uring: unavailable here (" + why + ") but " + RequireEnv + " requires it"
	}
	return "io_uring: unavailable here (" + why + "); io_uring tests are skipped, epoll tests run (" +
		RequireEnv + "=1 makes this a failure)"
}

// Need lets t go on where io_uring can run; elsewhere it skips t with the
// reason, or fails it when io_uring is required.
func Need(t testing.TB) {
	t.Helper()
	if Unavailable() == "" {
		return
	}
	if Required() {
		t.Fatal(Status())
	}
	t.Skip(Status())
}

// Main runs the tests of a package that all need io_uring (call it from
// TestMain). Where io_uring cannot run it prints Status and exits without
// running them: with status 0, or 1 when io_uring is required.
func Main(m *testing.M) {
	if Unavailable() == "" {
		os.Exit(m.Run())
	}
	fmt.Println(Status())
	if Required() {
		os.Exit(1)
	}
	os.Exit(0)
}
