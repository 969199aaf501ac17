package tests

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/examples/echo"
	"github.com/ringloop/ringloop/internal/testenv"
	"github.com/ringloop/ringloop/tasks"
)

// TestDialRefusedAfterListenerClose: once Close returns, or Closed completes
// after a Close on the loop, a dial is refused at once, on every backend,
// profile and threading mode (a parked io_uring loop's accept request holds
// the socket until the thread that armed it frees it; the listener shuts the
// socket down so that does not matter).
func TestDialRefusedAfterListenerClose(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		l := newLoop(t, c)
		for _, network := range []string{"tcp", "unix"} {
			for _, how := range []string{"Close", "Done"} {
				t.Run(network+"/"+how, func(t *testing.T) {
					addr := "127.0.0.1:0"
					if network == "unix" {
						addr = t.TempDir() + "/s"
					}
					ln, err := engine.Listen(l, network, addr, echo.Handler{})
					require.NoError(t, err)
					// Accept is armed and serving before the close.
					conn, err := net.DialTimeout(network, ln.Addr().String(), 5*time.Second)
					require.NoError(t, err)
					require.NoError(t, conn.SetDeadline(time.Now().Add(lifeWait)))
					_, err = conn.Write([]byte("x"))
					require.NoError(t, err)
					_, err = io.ReadFull(conn, make([]byte, 1))
					require.NoError(t, err)
					require.NoError(t, conn.Close())

					if how == "Close" {
						require.NoError(t, ln.Close())
					} else {
						require.NoError(t, l.Execute(tasks.Func(func() { _ = ln.Close() })))
						ctx, cancel := context.WithTimeout(context.Background(), lifeWait)
						defer cancel()
						_, err := ln.Closed().Await(ctx)
						require.NoError(t, err)
					}
					conn, err = net.DialTimeout(network, ln.Addr().String(), 5*time.Second)
					if err == nil {
						conn.Close()
					}
					require.Error(t, err, "dial after the listener's %s", how)
					if network == "tcp" {
						require.True(t, errors.Is(err, unix.ECONNREFUSED), "want ECONNREFUSED: %v", err)
					} else {
						// The path is removed with the socket.
						require.True(t, errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ECONNREFUSED), "want ENOENT or ECONNREFUSED: %v", err)
					}
				})
			}
		}
	})
}

// TestClosedListenerLeavesSharedSocket: a socket shared through Dup (a hot
// restart hands it to the next process) is not shut down by Close: the other
// descriptor goes on accepting.
func TestClosedListenerLeavesSharedSocket(t *testing.T) {
	testenv.ForEachBackend(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		l := newLoop(t, c)
		ln, err := engine.Listen(l, "tcp", "127.0.0.1:0", echo.Handler{})
		require.NoError(t, err)
		fd, err := ln.Dup()
		require.NoError(t, err)
		f := os.NewFile(uintptr(fd), "dup")
		defer f.Close()
		require.NoError(t, ln.Close())

		conn, err := net.DialTimeout("tcp", ln.Addr().String(), 5*time.Second)
		require.NoError(t, err, "the shared socket still listens")
		defer conn.Close()
		other, err := net.FileListener(f)
		require.NoError(t, err)
		defer other.Close()
		require.NoError(t, other.(*net.TCPListener).SetDeadline(time.Now().Add(lifeWait)))
		acc, err := other.Accept()
		require.NoError(t, err, "the other holder accepts it")
		require.NoError(t, acc.Close())
	})
}
