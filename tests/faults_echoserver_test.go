package tests

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/ringloop/ringloop/internal/driver"
	"github.com/ringloop/ringloop/internal/testenv"
)

// echoserverPkg is the example program the tests build without cgo.
const echoserverPkg = "github.com/ringloop/ringloop/examples/echoserver"

// echoserverEnv names a prebuilt CGO_ENABLED=0 echoserver to use instead of
// building one: where the suite runs without a Go toolchain (a booted test
// kernel).
const echoserverEnv = "RINGLOOP_ECHOSERVER"

// buildTimeout bounds `go build`; a cold build cache recompiles the standard
// library for CGO_ENABLED=0, which takes a while on a busy machine.
const buildTimeout = 5 * time.Minute

// serverTimeout bounds each step of a running echoserver (its first line,
// its exit).
const serverTimeout = 10 * time.Second

// TestEchoserverWithoutCgo builds examples/echoserver with CGO_ENABLED=0 (as
// users without liburing or a C toolchain do), runs it, drives echo traffic
// through it, and checks it serves on epoll and says why; then the
// environment overrides and the ways it stops.
func TestEchoserverWithoutCgo(t *testing.T) {
	testenv.CheckLeaks(t)
	bin := buildEchoserver(t)

	t.Run("auto", func(t *testing.T) {
		s := startEchoserver(t, bin)
		require.Equal(t, "epoll", s.backend, s.first)
		require.Equal(t, string(driver.Native), s.profile)
		require.Contains(t, s.reason, "fell back to epoll")
		require.Contains(t, s.reason, "built without liburing")
		s.traffic(t)
		// An open connection does not hold up the exit; the peer sees it
		// closed.
		idle, err := net.Dial("tcp", s.addr)
		require.NoError(t, err)
		defer idle.Close()
		require.NoError(t, s.stdin.Close())
		s.exitsZero(t)
		_ = idle.SetReadDeadline(time.Now().Add(serverTimeout))
		_, err = idle.Read(make([]byte, 1))
		require.Error(t, err, "the server's shutdown must close open connections")
		require.False(t, errors.Is(err, os.ErrDeadlineExceeded), "connection left open after shutdown")
		require.Equal(t, 1, strings.Count(s.stderr.String(), fallbackWarning), "stderr:\n%s", s.stderr.String())
	})

	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(unix.SignalName(sig), func(t *testing.T) {
			s := startEchoserver(t, bin)
			s.traffic(t)
			require.NoError(t, s.cmd.Process.Signal(sig))
			s.exitsZero(t)
		})
	}

	t.Run("RINGLOOP_BACKEND=epoll", func(t *testing.T) {
		s := startEchoserver(t, bin, testenv.BackendEnv+"=epoll", driver.ProfileEnv+"=5.10")
		require.Equal(t, "epoll", s.backend)
		require.Equal(t, "5.10", s.profile)
		require.Equal(t, "forced by RINGLOOP_BACKEND=epoll", s.reason)
		s.traffic(t)
		require.NoError(t, s.stdin.Close())
		s.exitsZero(t)
		require.NotContains(t, s.stderr.String(), fallbackWarning)
	})

	// Where the program cannot serve as asked it exits 1 with the reason,
	// before printing its listening line.
	for _, tc := range []struct{ env, want string }{
		{testenv.BackendEnv + "=io_uring", "built without liburing"},
		{testenv.BackendEnv + "=bogus", `"bogus"`},
		{driver.ProfileEnv + "=4.19", `"4.19"`},
	} {
		t.Run(tc.env, func(t *testing.T) {
			cmd := exec.Command(bin)
			cmd.Env = append(withoutEnv(os.Environ(), ringloopEnv...), tc.env)
			var stdout, stderr testenv.SyncBuffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := runWithin(t, cmd, serverTimeout)
			var exit *exec.ExitError
			require.ErrorAs(t, err, &exit, "stderr:\n%s", stderr.String())
			require.Equal(t, 1, exit.ExitCode())
			require.Empty(t, stdout.String())
			require.Contains(t, stderr.String(), tc.want)
		})
	}
}

// buildEchoserver builds examples/echoserver with CGO_ENABLED=0 into a
// temporary directory and returns the binary's path, or returns the
// prebuilt one echoserverEnv names.
func buildEchoserver(t *testing.T) string {
	t.Helper()
	if bin := os.Getenv(echoserverEnv); bin != "" {
		_, err := os.Stat(bin)
		require.NoError(t, err, "%s", echoserverEnv)
		return bin
	}
	// go test puts its own toolchain first in PATH.
	goTool, err := exec.LookPath("go")
	require.NoError(t, err, "the go tool is needed to build examples/echoserver")
	bin := filepath.Join(t.TempDir(), "echoserver")
	ctx, cancel := context.WithTimeout(context.Background(), buildTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, goTool, "build", "-o", bin, echoserverPkg)
	cmd.Env = append(withoutEnv(os.Environ(), "CGO_ENABLED", "GOFLAGS"), "CGO_ENABLED=0", "GOFLAGS="+noRaceFlags())
	start := time.Now()
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "CGO_ENABLED=0 go build %s:\n%s", echoserverPkg, out)
	t.Logf("CGO_ENABLED=0 go build %s: %v", echoserverPkg, time.Since(start).Round(time.Millisecond))
	return bin
}

// noRaceFlags returns GOFLAGS without -race, which needs cgo.
func noRaceFlags() string {
	var keep []string
	for _, f := range strings.Fields(os.Getenv("GOFLAGS")) {
		if f != "-race" && f != "-race=true" {
			keep = append(keep, f)
		}
	}
	return strings.Join(keep, " ")
}

// runWithin runs cmd and kills it if it takes longer than d.
func runWithin(t *testing.T, cmd *exec.Cmd, d time.Duration) error {
	t.Helper()
	require.NoError(t, cmd.Start())
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(d):
		_ = cmd.Process.Kill()
		<-done
		t.Fatalf("%s did not finish within %v", cmd.Path, d)
		return nil
	}
}

// echoserver is one running examples/echoserver.
type echoserver struct {
	cmd           *exec.Cmd
	stdin         io.WriteCloser
	stderr        *testenv.SyncBuffer
	done          chan error
	first         string // its first line
	addr, backend string
	profile       string
	reason        string
	exited        bool
}

// listeningLine is the echoserver's first line on stdout.
var listeningLine = regexp.MustCompile(`^listening (\S+) backend=(\S+) profile=(\S+) reason=(".*")$`)

// startEchoserver runs bin with env added to a clean environment and waits
// for its listening line.
func startEchoserver(t *testing.T, bin string, env ...string) *echoserver {
	t.Helper()
	s := &echoserver{cmd: exec.Command(bin), stderr: &testenv.SyncBuffer{}, done: make(chan error, 1)}
	s.cmd.Env = append(withoutEnv(os.Environ(), ringloopEnv...), env...)
	s.cmd.Stderr = s.stderr
	var err error
	s.stdin, err = s.cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := s.cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, s.cmd.Start())
	lines := make(chan string, 1)
	go func() {
		// Read every line, so the program never blocks on stdout, and
		// finish before Wait closes the pipe.
		sc := bufio.NewScanner(stdout)
		for first := true; sc.Scan(); first = false {
			if first {
				lines <- sc.Text()
			}
		}
		close(lines)
		s.done <- s.cmd.Wait()
	}()
	t.Cleanup(func() {
		if !s.exited {
			_ = s.cmd.Process.Kill()
			<-s.done
		}
	})
	select {
	case s.first = <-lines:
	case <-time.After(serverTimeout):
		t.Fatalf("echoserver printed no line within %v; stderr:\n%s", serverTimeout, s.stderr.String())
	}
	m := listeningLine.FindStringSubmatch(s.first)
	require.NotNil(t, m, "first line %q; stderr:\n%s", s.first, s.stderr.String())
	s.addr, s.backend, s.profile = m[1], m[2], m[3]
	s.reason, err = strconv.Unquote(m[4])
	require.NoError(t, err, "reason in %q", s.first)
	return s
}

// traffic echoes through the server on several connections at once, every
// byte checked.
func (s *echoserver) traffic(t *testing.T) {
	t.Helper()
	errs := make(chan error, 4)
	for i, size := range []int{1, 1000, 16 << 10, 64 << 10} {
		go func() { errs <- pingPong(s.addr, 20, size, byte(i)) }()
	}
	for range 4 {
		require.NoError(t, <-errs)
	}
}

// exitsZero waits for the server to exit and checks it exited 0.
func (s *echoserver) exitsZero(t *testing.T) {
	t.Helper()
	select {
	case err := <-s.done:
		s.exited = true
		require.NoError(t, err, "echoserver exit; stderr:\n%s", s.stderr.String())
	case <-time.After(serverTimeout):
		t.Fatalf("echoserver did not exit within %v; stderr:\n%s", serverTimeout, s.stderr.String())
	}
}
