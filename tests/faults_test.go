package tests

// Fault injection for backend selection: io_uring refused the way real
// deployments refuse it (a seccomp filter returning EPERM as Docker's and
// Kubernetes' default profiles and kernel.io_uring_disabled do, or ENOSYS as
// a kernel without io_uring does). A filter cannot be removed, so each case
// runs in a child process: the parent test re-runs this binary with one
// TestChild* test, which installs the filter first (see internal/seccomp).

import (
	"log/slog"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/internal/driver"
	"github.com/ringloop/ringloop/internal/testenv"
	"github.com/ringloop/ringloop/internal/uringcheck"
)

// fallbackWarning is the message the engine logs, once per process, when
// auto falls back to epoll.
const fallbackWarning = "ringloop: io_uring unavailable, serving on epoll"

// TestAutoFallsBackWhenIOUringRefused: under the filter, engine.New with the
// default backend serves on epoll, says why, and logs the warning once for
// several loops. Also with a kernel profile from the environment, which the
// fallback driver must keep.
func TestAutoFallsBackWhenIOUringRefused(t *testing.T) {
	for _, tc := range []struct {
		name  string
		errno unix.Errno
		env   []string
	}{
		{"EPERM", unix.EPERM, nil},
		{"ENOSYS", unix.ENOSYS, nil},
		{"EPERM/profile=5.10", unix.EPERM, []string{driver.ProfileEnv + "=5.10"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			runChild(t, tc.errno, "TestChildAutoFallback", tc.env...)
		})
	}
}

// TestChildAutoFallback is the child of TestAutoFallsBackWhenIOUringRefused.
func TestChildAutoFallback(t *testing.T) {
	errno := inChild(t)
	logs := captureDefaultLog(t)
	wantProfile, err := driver.ProfileFromEnv()
	require.NoError(t, err)
	testenv.CheckLeaks(t)

	const loops = 3
	addrs := make([]string, loops)
	for i := range addrs {
		l, err := engine.New() // the default: BackendAuto, env honoured
		require.NoError(t, err, "engine.New must fall back, not fail")
		t.Cleanup(func() { require.NoError(t, l.Close()) })
		info := l.Backend()
		t.Logf("loop %d: %v", i, info)
		require.Equal(t, engine.BackendEpoll, info.Name, "%v", info)
		require.Equal(t, "epoll", info.Features.Backend)
		require.Equal(t, wantProfile, info.Features.Profile)
		require.Contains(t, info.Reason, "fell back to epoll")
		require.Contains(t, info.Reason, refusalCause(errno), "the reason must carry the refusal")
		if cgoBuild {
			require.Contains(t, info.Reason, "io_uring_setup", "the reason must name the refused call")
			require.NotContains(t, info.Reason, "unexpected", "a refusal is an expected fallback")
		}
		addrs[i] = listenEcho(t, l).Addr().String()
	}

	// Once for the process, however many loops fell back.
	warns := logs.lines()
	require.Len(t, warns, 1, "%q", warns)
	require.Contains(t, warns[0], "WARN "+fallbackWarning)
	require.Contains(t, warns[0], refusalCause(errno))

	// Real traffic through every loop at once, every byte checked.
	var wg sync.WaitGroup
	errs := make(chan error, loops*4)
	for i, addr := range addrs {
		for j, size := range []int{1, 1000, 16 << 10, 64 << 10} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs <- pingPong(addr, 20, size, byte(i*4+j))
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	require.Len(t, logs.lines(), 1, "serving logged more: %q", logs.lines())
}

// TestForcedUringRefused: io_uring forced (by option or by RINGLOOP_BACKEND)
// where it is refused is an error from engine.New that names the cause, with
// no fallback and nothing leaked.
func TestForcedUringRefused(t *testing.T) {
	for _, errno := range []unix.Errno{unix.EPERM, unix.ENOSYS} {
		t.Run(unix.ErrnoName(errno), func(t *testing.T) {
			runChild(t, errno, "TestChildForcedUring")
		})
	}
}

// TestChildForcedUring is the child of TestForcedUringRefused.
func TestChildForcedUring(t *testing.T) {
	errno := inChild(t)
	logs := captureDefaultLog(t)
	testenv.CheckLeaks(t)
	fds := testenv.CountFDs(t)

	for _, tc := range []struct {
		name, env, mention string
		opts               []engine.Option
	}{
		{"option", "", "forced by option", []engine.Option{engine.WithBackend(engine.BackendUring)}},
		{"option over env=epoll", "epoll", "forced by option", []engine.Option{engine.WithBackend(engine.BackendUring)}},
		{"env=io_uring", "io_uring", "forced by RINGLOOP_BACKEND=io_uring", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(testenv.BackendEnv, tc.env)
			for range 3 { // repeated: a leak per attempt would add up
				l, err := engine.New(tc.opts...)
				require.Error(t, err, "io_uring forced where refused must fail, not fall back")
				require.Nil(t, l)
				require.ErrorIs(t, err, driver.ErrUringUnavailable)
				if cgoBuild {
					require.ErrorIs(t, err, errno)
				}
				require.Contains(t, err.Error(), refusalCause(errno))
				require.Contains(t, err.Error(), tc.mention)
			}
			require.Equal(t, fds, testenv.CountFDs(t), "fds leaked by a failed engine.New")
		})
	}
	require.Empty(t, logs.lines(), "a forced backend must not log a fallback")

	// Under the same filter epoll can still be forced, and serves.
	t.Setenv(testenv.BackendEnv, "epoll")
	l, err := engine.New()
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, l.Close()) })
	require.Equal(t, engine.BackendEpoll, l.Backend().Name)
	require.Equal(t, "forced by RINGLOOP_BACKEND=epoll", l.Backend().Reason)
	require.NoError(t, pingPong(listenEcho(t, l).Addr().String(), 10, 4096, 7))
	require.Empty(t, logs.lines(), "forced epoll must not log a fallback")
}

// TestBackendEnv: RINGLOOP_BACKEND forces a backend and says so; an invalid
// value is an error; an explicit WithBackend wins over it.
func TestBackendEnv(t *testing.T) {
	testenv.CheckLeaks(t)
	newOK := func(t *testing.T, opts ...engine.Option) *engine.Loop {
		t.Helper()
		l, err := engine.New(opts...)
		require.NoError(t, err)
		t.Cleanup(func() { require.NoError(t, l.Close()) })
		return l
	}

	t.Run("epoll", func(t *testing.T) {
		t.Setenv(testenv.BackendEnv, "epoll")
		l := newOK(t)
		require.Equal(t, engine.BackendEpoll, l.Backend().Name)
		require.Equal(t, "epoll", l.Backend().Features.Backend)
		require.Equal(t, "forced by RINGLOOP_BACKEND=epoll", l.Backend().Reason)
		require.NoError(t, pingPong(listenEcho(t, l).Addr().String(), 10, 1000, 1))
	})

	t.Run("io_uring", func(t *testing.T) {
		t.Setenv(testenv.BackendEnv, "io_uring")
		if !cgoBuild {
			l, err := engine.New()
			require.Nil(t, l)
			require.ErrorIs(t, err, driver.ErrUringUnavailable)
			require.ErrorContains(t, err, "built without liburing")
			require.ErrorContains(t, err, "RINGLOOP_BACKEND=io_uring")
			return
		}
		uringcheck.Need(t)
		l := newOK(t)
		require.Equal(t, engine.BackendUring, l.Backend().Name)
		require.Equal(t, "forced by RINGLOOP_BACKEND=io_uring", l.Backend().Reason)
		require.NoError(t, pingPong(listenEcho(t, l).Addr().String(), 10, 1000, 2))
	})

	t.Run("invalid", func(t *testing.T) {
		fds := testenv.CountFDs(t)
		for _, v := range []string{"bogus", "EPOLL", "uring", "io_uring ", "iouring"} {
			t.Setenv(testenv.BackendEnv, v)
			l, err := engine.New()
			require.Nil(t, l, "%q", v)
			require.Error(t, err, "%q", v)
			require.Contains(t, err.Error(), `"`+v+`"`, "the error must quote the bad value")
			require.Contains(t, err.Error(), "auto, io_uring or epoll", "the error must list the valid values")
		}
		require.Equal(t, fds, testenv.CountFDs(t))
	})

	t.Run("option wins", func(t *testing.T) {
		t.Setenv(testenv.BackendEnv, "bogus")
		l := newOK(t, engine.WithBackend(engine.BackendEpoll))
		require.Equal(t, engine.BackendEpoll, l.Backend().Name)
		require.Equal(t, "forced by option", l.Backend().Reason)
	})
}

// TestKernelProfileEnv: RINGLOOP_KERNEL_PROFILE sets every backend's profile
// (and so masks its features); an invalid one is an error; WithKernelProfile
// wins over it.
func TestKernelProfileEnv(t *testing.T) {
	testenv.CheckLeaks(t)
	backends := []engine.Backend{engine.BackendAuto, engine.BackendEpoll}
	if cgoBuild && testenv.HaveUring(t) {
		backends = append(backends, engine.BackendUring)
	}
	// Without cgo, auto falls back and warns; the fallback tests check that.
	quiet := engine.WithLogger(slog.New(slog.DiscardHandler))
	for _, p := range driver.Profiles {
		t.Run(string(p), func(t *testing.T) {
			t.Setenv(driver.ProfileEnv, string(p))
			for _, b := range backends {
				l, err := engine.New(engine.WithBackend(b), quiet)
				require.NoError(t, err, "%v", b)
				f := l.Backend().Features
				require.Equal(t, p, f.Profile, "%v", b)
				if p == driver.Kernel510 {
					// Features a 5.10 kernel lacks, whatever this one has.
					require.False(t, f.EpollPwait2, "%v: epoll_pwait2 is 5.11", b)
					require.False(t, f.ExtArg, "%v: EXT_ARG is 5.11", b)
					require.False(t, f.MultishotAccept, "%v: multishot accept is 5.19", b)
					require.False(t, f.MultishotRecv, "%v: multishot recv is 6.0", b)
					require.False(t, f.MsgRing, "%v: MSG_RING is 5.18", b)
				}
				if b == engine.BackendAuto && p == driver.Kernel510 {
					require.NoError(t, pingPong(listenEcho(t, l).Addr().String(), 10, 1000, 3))
				}
				require.NoError(t, l.Close())
			}
		})
	}

	t.Run("invalid", func(t *testing.T) {
		for _, v := range []string{"4.19", "5.4", "Native", "6.1 "} {
			t.Setenv(driver.ProfileEnv, v)
			for _, b := range backends {
				l, err := engine.New(engine.WithBackend(b), quiet)
				require.Nil(t, l)
				require.Error(t, err, "%q %v", v, b)
				require.Contains(t, err.Error(), `"`+v+`"`)
			}
		}
	})

	t.Run("option wins", func(t *testing.T) {
		t.Setenv(driver.ProfileEnv, "5.10")
		l, err := engine.New(engine.WithBackend(engine.BackendEpoll), engine.WithDriverConfig(engine.DriverConfig{Profile: "6.1"}))
		require.NoError(t, err)
		require.Equal(t, driver.Kernel61, l.Backend().Features.Profile)
		require.NoError(t, l.Close())
	})
}
