package tests

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/internal/testenv"
	"github.com/ringloop/ringloop/tasks"
)

// requireOpError checks that err is an *net.OpError for op on network at
// addr, wrapping the *os.SyscallError of syscall (none: "") and errno, and
// that it reads exactly as net's own error for the same failure.
func requireOpError(t *testing.T, err error, op, network, addr, syscall string, errno error, netErr error) {
	t.Helper()
	var oe *net.OpError
	require.ErrorAs(t, err, &oe, "want a *net.OpError, got %T: %v", err, err)
	require.Equal(t, op, oe.Op)
	require.Equal(t, network, oe.Net)
	if addr == "" {
		require.Nil(t, oe.Addr, "no address was tried")
	} else {
		require.NotNil(t, oe.Addr)
		require.Equal(t, addr, oe.Addr.String())
	}
	require.Nil(t, oe.Source, "no local address was asked for, as net")
	if syscall != "" {
		var se *os.SyscallError
		require.ErrorAs(t, err, &se)
		require.Equal(t, syscall, se.Syscall)
	}
	if errno != nil {
		require.ErrorIs(t, err, errno)
	}
	require.Error(t, netErr, "net fails the same way")
	require.Equal(t, netErr.Error(), err.Error(), "reads as net's error")
}

// TestListenErrors: Listen's errors are net.Listen's: an address in use
// reads "listen tcp 127.0.0.1:P: bind: address already in use".
func TestListenErrors(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		l := newLoop(t, c)
		h := newRecorder()

		held, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		defer held.Close()
		addr := held.Addr().String()
		_, err = engine.Listen(l, "tcp", addr, h)
		_, netErr := net.Listen("tcp", addr)
		requireOpError(t, err, "listen", "tcp", addr, "bind", unix.EADDRINUSE, netErr)
		require.ErrorIs(t, err, unix.EADDRINUSE)

		_, err = engine.Listen(l, "tcp4", addr, h)
		_, netErr = net.Listen("tcp4", addr)
		requireOpError(t, err, "listen", "tcp4", addr, "bind", unix.EADDRINUSE, netErr)

		path := filepath.Join(t.TempDir(), "s")
		uheld, err := net.Listen("unix", path)
		require.NoError(t, err)
		defer uheld.Close()
		_, err = engine.Listen(l, "unix", path, h)
		_, netErr = net.Listen("unix", path)
		requireOpError(t, err, "listen", "unix", path, "bind", unix.EADDRINUSE, netErr)

		_, err = engine.Listen(l, "tcp", "no-port", h)
		_, netErr = net.Listen("tcp", "no-port")
		requireOpError(t, err, "listen", "tcp", "", "", nil, netErr)
	})
}

// TestDialErrors: Dial's errors are net.Dial's: "dial tcp 127.0.0.1:P:
// connect: connection refused", a cancel's context error inside, and
// ErrShutdown inside once the loop has shut down.
func TestDialErrors(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		l := newLoop(t, c)
		free, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		addr := free.Addr().String()
		require.NoError(t, free.Close())
		ctx := context.Background()

		for _, network := range []string{"tcp", "tcp4"} {
			_, err = engine.Dial(ctx, l, network, addr, newRecorder())
			_, netErr := net.Dial(network, addr)
			requireOpError(t, err, "dial", network, addr, "connect", unix.ECONNREFUSED, netErr)
		}

		path := filepath.Join(t.TempDir(), "none")
		_, err = engine.Dial(ctx, l, "unix", path, newRecorder())
		_, netErr := net.Dial("unix", path)
		requireOpError(t, err, "dial", "unix", path, "connect", unix.ENOENT, netErr)

		_, err = engine.Dial(ctx, l, "tcp", "no-port", newRecorder())
		_, netErr = net.Dial("tcp", "no-port")
		requireOpError(t, err, "dial", "tcp", "", "", nil, netErr)

		cancelled, cancel := context.WithCancel(ctx)
		cancel()
		_, err = engine.Dial(cancelled, l, "tcp", addr, newRecorder())
		var oe *net.OpError
		require.ErrorAs(t, err, &oe)
		require.Equal(t, "dial", oe.Op)
		require.ErrorIs(t, err, context.Canceled)

		expired, cancel2 := context.WithDeadline(ctx, time.Now().Add(-time.Second))
		defer cancel2()
		_, err = engine.Dial(expired, l, "tcp", addr, newRecorder())
		require.ErrorAs(t, err, &oe)
		require.True(t, oe.Timeout(), "a dial past its deadline is a timeout: %v", err)
		require.ErrorIs(t, err, context.DeadlineExceeded)
		require.ErrorIs(t, err, os.ErrDeadlineExceeded)

		require.NoError(t, l.Close())
		_, err = engine.Dial(ctx, l, "tcp", addr, newRecorder())
		require.ErrorAs(t, err, &oe)
		require.Equal(t, "dial", oe.Op)
		require.ErrorIs(t, err, engine.ErrShutdown)
	})
}

// TestOnCloseAfterShutdown: a connection the loop's shutdown ends, accepted
// or dialed, reports a cause that is ErrShutdown (and tasks.ErrShutdown)
// and says so.
func TestOnCloseAfterShutdown(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		l, err := engine.New(c.Options()...)
		require.NoError(t, err)
		accepted := newRecorder()
		_, peer := acceptOne(t, l, accepted)
		defer peer.Close()
		recv(t, accepted.opened, "OnOpen of the accepted connection")
		dialed := newRecorder()
		_, err = engine.Dial(context.Background(), l, "tcp", listenEcho(t, l).Addr().String(), dialed)
		require.NoError(t, err)
		require.NoError(t, l.Close())
		for _, r := range []*recorder{accepted, dialed} {
			cause := waitErr(t, r.closed)
			require.ErrorIs(t, cause, engine.ErrShutdown)
			require.ErrorIs(t, cause, tasks.ErrShutdown, "code written against the executor contract still matches")
			require.Equal(t, "engine: loop shut down", cause.Error())
		}
		require.True(t, errors.Is(l.Execute(tasks.Func(func() {})), engine.ErrShutdown))
	})
}
