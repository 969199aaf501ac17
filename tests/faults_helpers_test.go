package tests

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/ringloop/ringloop/internal/driver"
	"github.com/ringloop/ringloop/internal/seccomp"
	"github.com/ringloop/ringloop/internal/testenv"
	"github.com/ringloop/ringloop/internal/uringcheck"
)

// childTimeout bounds one child process of the fault tests (its tests ask
// for a few seconds; the rest is slack for a busy machine under -race).
const childTimeout = 60 * time.Second

// childPassed is what a child test prints as its last act, so the parent
// knows the test it asked for really ran (a mistyped -test.run pattern
// would otherwise pass with "no tests to run").
const childPassed = "fault child passed: "

// faultErrnos maps the errno names a parent passes through seccomp.ChildEnv
// to the errnos.
var faultErrnos = map[string]unix.Errno{"EPERM": unix.EPERM, "ENOSYS": unix.ENOSYS}

// ringloopEnv are the variables the engine reads; children start without
// them unless a test sets them (a child asserts over every backend, so the
// suite's narrowing to one, testenv.BackendsEnv, is dropped too).
var ringloopEnv = []string{"RINGLOOP_BACKEND", driver.ProfileEnv, uringcheck.RequireEnv, testenv.BackendsEnv}

// withoutEnv returns env without the named variables.
func withoutEnv(env []string, names ...string) []string {
	out := make([]string, 0, len(env))
next:
	for _, kv := range env {
		for _, n := range names {
			if strings.HasPrefix(kv, n+"=") {
				continue next
			}
		}
		out = append(out, kv)
	}
	return out
}

// quickRaceExit stops a race-enabled child from sleeping a second at exit
// (the race runtime's atexit_sleep_ms); other binaries ignore GORACE.
func quickRaceExit(env []string) []string {
	opts := "atexit_sleep_ms=0"
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "GORACE="); ok {
			opts = v + " " + opts
		}
	}
	return append(withoutEnv(env, "GORACE"), "GORACE="+opts)
}

// runChild re-runs this test binary with only the test named name, under a
// seccomp filter that makes the io_uring system calls fail with errno, and
// fails unless that test ran and passed. env adds variables (the child
// starts without any RINGLOOP_* variable of the parent's).
func runChild(t *testing.T, errno unix.Errno, name string, env ...string) string {
	t.Helper()
	start := time.Now()
	out, err := startChild(t, errno, name, nil, env...)
	require.NoError(t, err, "child %s (%v) failed:\n%s", name, errno, out)
	require.Contains(t, out, childPassed+name, "child %s did not run:\n%s", name, out)
	t.Logf("child %s under %s: %v", name, unix.ErrnoName(errno), time.Since(start).Round(time.Millisecond))
	return out
}

// startChild runs the child as runChild does, with extra test flags, and
// returns its output and exit error.
func startChild(t *testing.T, errno unix.Errno, name string, flags []string, env ...string) (string, error) {
	t.Helper()
	cmd, err := seccomp.ChildCommand(errno, "^"+name+"$")
	require.NoError(t, err)
	cmd.Args = append(cmd.Args, fmt.Sprintf("-test.timeout=%v", childTimeout))
	cmd.Args = append(cmd.Args, flags...)
	cmd.Env = append(withoutEnv(cmd.Env, ringloopEnv...), env...)
	cmd.Env = quickRaceExit(cmd.Env)
	var out testenv.SyncBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	require.NoError(t, cmd.Start())
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-time.After(childTimeout + 10*time.Second):
		_ = cmd.Process.Kill()
		<-done
		t.Fatalf("child %s did not finish within %v:\n%s", name, childTimeout, out.String())
	}
	return out.String(), err
}

// inChild installs the filter the parent asked for and returns its errno; in
// a plain run (no parent) it skips: these tests only make sense under the
// filter, and their parents run them.
func inChild(t *testing.T) unix.Errno {
	t.Helper()
	installed, err := seccomp.InstallFromEnv()
	require.NoError(t, err)
	if !installed {
		t.Skip("runs only as a child process of the fault tests, under a seccomp filter")
	}
	errno, ok := faultErrnos[os.Getenv(seccomp.ChildEnv)]
	require.True(t, ok, "%s=%q", seccomp.ChildEnv, os.Getenv(seccomp.ChildEnv))
	// The filter is in force on this thread (and, through TSYNC, on every
	// thread, including those a loop locks later).
	require.Equal(t, errno, rawIOUringSetup(), "io_uring_setup under the filter")
	t.Cleanup(func() {
		if !t.Failed() {
			fmt.Println(childPassed + t.Name())
		}
	})
	return errno
}

// rawIOUringSetup calls io_uring_setup directly (no cgo) and returns its
// errno (0: it worked; the ring is closed at once).
func rawIOUringSetup() unix.Errno {
	var params [15]uint64 // struct io_uring_params: 120 bytes
	fd, _, e := unix.Syscall(unix.SYS_IO_URING_SETUP, 4, uintptr(unsafe.Pointer(&params)), 0)
	if e == 0 {
		unix.Close(int(fd))
	}
	return e
}

// refusalCause is what a refused io_uring's errno reads as in a reason or an
// error: the errno's text with cgo; without cgo the engine never gets as far
// as the system call.
func refusalCause(errno unix.Errno) string {
	if !cgoBuild {
		return "built without liburing"
	}
	return errno.Error() // "operation not permitted", "function not implemented"
}

// logCapture is a slog.Handler that keeps every record.
type logCapture struct {
	mu   sync.Mutex
	recs []slog.Record
}

func (h *logCapture) Enabled(context.Context, slog.Level) bool { return true }
func (h *logCapture) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *logCapture) WithGroup(string) slog.Handler            { return h }

func (h *logCapture) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.recs = append(h.recs, r.Clone())
	return nil
}

// attr returns the value of key in the first record whose message
// contains msg (nil: none).
func (h *logCapture) attr(msg, key string) any {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, r := range h.recs {
		if !strings.Contains(r.Message, msg) {
			continue
		}
		var v any
		r.Attrs(func(a slog.Attr) bool {
			if a.Key == key {
				v = a.Value.Any()
				return false
			}
			return true
		})
		return v
	}
	return nil
}

// lines renders each record as "LEVEL message key=value ...".
func (h *logCapture) lines() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]string, 0, len(h.recs))
	for _, r := range h.recs {
		s := r.Level.String() + " " + r.Message
		r.Attrs(func(a slog.Attr) bool {
			s += " " + a.String()
			return true
		})
		out = append(out, s)
	}
	return out
}

// captureDefaultLog makes a logCapture the default slog logger for the rest
// of the test: loops built without WithLogger report there.
func captureDefaultLog(t *testing.T) *logCapture {
	h := &logCapture{}
	old := slog.Default()
	slog.SetDefault(slog.New(h))
	t.Cleanup(func() { slog.SetDefault(old) })
	return h
}
