package engine_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/examples/echo"
	"github.com/ringloop/ringloop/internal/driver"
	"github.com/ringloop/ringloop/internal/testenv"
	"github.com/ringloop/ringloop/tasks"
)

var errInjected = errors.New("injected wait failure")

// failingWait wraps a real driver: while fails > 0 each Wait fails before
// touching the driver (as an io_uring_enter or epoll_wait error would).
type failingWait struct {
	driver.Driver
	fails atomic.Int64
}

func (f *failingWait) Wait(timeout time.Duration, fn func(*driver.Completion)) (int, error) {
	if f.fails.Load() > 0 {
		f.fails.Add(-1)
		return 0, errInjected
	}
	return f.Driver.Wait(timeout, fn)
}

// Enable forwards the io_uring driver's thread binding.
func (f *failingWait) Enable() error {
	if e, ok := f.Driver.(interface{ Enable() error }); ok {
		return e.Enable()
	}
	return nil
}

// newFailingLoop builds a loop for c on a failingWait driver, with a short
// back-off, logging into the returned buffer.
func newFailingLoop(t *testing.T, c testenv.Combo) (*engine.Loop, *failingWait, *testenv.SyncBuffer) {
	t.Helper()
	t.Cleanup(engine.SetLoopErrorBackoff(time.Millisecond, 4*time.Millisecond))
	f := &failingWait{}
	var logs testenv.SyncBuffer
	l, err := engine.New(c.Options(
		engine.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))),
		engine.WithDriverWrapper(func(d driver.Driver) driver.Driver { f.Driver = d; return f }),
	)...)
	require.NoError(t, err)
	return l, f, &logs
}

// echoRoundTrip writes msg on conn and reads it back.
func echoRoundTrip(t *testing.T, conn net.Conn, msg string) {
	t.Helper()
	_ = conn.SetDeadline(time.Now().Add(20 * time.Second))
	_, err := conn.Write([]byte(msg))
	require.NoError(t, err)
	buf := make([]byte, len(msg))
	_, err = io.ReadFull(conn, buf)
	require.NoError(t, err)
	require.Equal(t, msg, string(buf))
}

// TestDriverWaitFailureRecovers: a Wait that fails is logged, followed by a
// back-off and a retry of the same driver, and the loop goes on: tasks run, a connection
// opened before the failures still echoes, a new one is accepted.
func TestDriverWaitFailureRecovers(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		l, f, logs := newFailingLoop(t, c)
		ln, err := engine.Listen(l, "tcp", "127.0.0.1:0", echo.Handler{})
		require.NoError(t, err)
		conn, err := net.Dial("tcp", ln.Addr().String())
		require.NoError(t, err)
		defer conn.Close()
		echoRoundTrip(t, conn, "before")

		const fails = 3
		f.fails.Store(fails)
		require.NoError(t, l.Execute(tasks.Func(func() {}))) // wake the loop into them
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		testenv.Eventually(t, 20*time.Second, "the failures", func() bool { return f.fails.Load() == 0 })
		_, err = engine.Submit(l, func() (struct{}, error) { return struct{}{}, nil }).Await(ctx)
		require.NoError(t, err)
		echoRoundTrip(t, conn, "after")
		conn2, err := net.Dial("tcp", ln.Addr().String())
		require.NoError(t, err)
		defer conn2.Close()
		echoRoundTrip(t, conn2, "new")

		m := l.Metrics()
		require.EqualValues(t, fails, m.WaitErrors)
		out := logs.String()
		require.Equal(t, 1, strings.Count(out, "driver wait failed; retrying after a back-off"), out)
		require.Equal(t, 1, strings.Count(out, "driver keeps failing"), out) // the 2nd failure in a row (the 3rd is not logged)
		require.Contains(t, out, errInjected.Error())
		require.Contains(t, out, `"failed waits"=3`)
		require.NoError(t, ln.Close())
		require.NoError(t, l.Close())
	})
}

// TestDriverKeepsFailing: a driver whose every Wait fails is reported
// clearly (with the count of failures in a row, at 1, 2, 4, 8...), never
// floods the log, and the loop can still be shut down.
func TestDriverKeepsFailing(t *testing.T) {
	testenv.ForEachBackend(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		l, f, logs := newFailingLoop(t, c)
		_, err := engine.Submit(l, func() (struct{}, error) { return struct{}{}, nil }).Await(context.Background())
		require.NoError(t, err)
		f.fails.Store(1 << 40)
		require.NoError(t, l.Execute(tasks.Func(func() {})))
		testenv.Eventually(t, 20*time.Second, "40 failures", func() bool { return l.Metrics().WaitErrors >= 40 })
		out := logs.String()
		require.Contains(t, out, `driver keeps failing; retrying after a back-off" loop=`)
		require.Contains(t, out, `"failures in a row"=32`)
		n := l.Metrics().WaitErrors
		require.LessOrEqual(t, strings.Count(out, "level=ERROR"), 2*(bitsLen(n)+1), "log lines for %d failures:\n%s", n, out)
		// Shutdown still completes with the driver failing.
		require.NoError(t, l.Close())
		require.Equal(t, engine.Terminated, l.State())
	})
}

func bitsLen(n uint64) int {
	b := 0
	for ; n > 0; n >>= 1 {
		b++
	}
	return b
}
