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
	"github.com/ringloop/ringloop/internal/testenv"
	"github.com/ringloop/ringloop/tasks"
)

// closeRecorder echoes and reports each connection's OnOpen and OnClose.
type closeRecorder struct {
	opened chan *engine.Conn
	closed chan error
}

func (h closeRecorder) OnOpen(c *engine.Conn)             { h.opened <- c }
func (closeRecorder) OnData(c *engine.Conn, b []byte)     { _, _ = c.Write(b) }
func (h closeRecorder) OnClose(_ *engine.Conn, err error) { h.closed <- err }

// TestEnginePanicStopsTheLoop: a panic in the engine's own code (injected
// where completions are routed inside the driver's Wait, between waits, or
// in one of the engine's tasks) is not logged and carried on from: the loop
// stops, every connection gets OnClose with the cause (ErrLoopPanicked, and
// the *tasks.PanicError with the value), peers see their connections end,
// Shutdown returns it, it is logged once, and nothing
// leaks.
func TestEnginePanicStopsTheLoop(t *testing.T) {
	for _, at := range []string{"completion", "iteration", "engine task"} {
		t.Run(strings.ReplaceAll(at, " ", "_"), func(t *testing.T) { testEnginePanic(t, at) })
	}
}

func testEnginePanic(t *testing.T, at string) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		var armed atomic.Bool
		var logs testenv.SyncBuffer
		l, err := engine.New(c.Options(
			engine.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))),
			engine.WithFaultHook(func(where string) {
				if where == at && armed.CompareAndSwap(true, false) {
					panic("injected engine fault")
				}
			}),
		)...)
		require.NoError(t, err)
		h := closeRecorder{opened: make(chan *engine.Conn, 4), closed: make(chan error, 4)}
		ln, err := engine.Listen(l, "tcp", "127.0.0.1:0", h)
		require.NoError(t, err)
		var peers []net.Conn
		var conns []*engine.Conn
		for range 2 {
			nc, err := net.DialTimeout("tcp", ln.Addr().String(), 20*time.Second)
			require.NoError(t, err)
			defer nc.Close()
			echoRoundTrip(t, nc, "hello")
			peers = append(peers, nc)
			conns = append(conns, <-h.opened)
		}

		armed.Store(true)
		switch at {
		case "completion":
			_, err = peers[0].Write([]byte("x"))
		case "iteration":
			err = l.Execute(tasks.Func(func() {}))
		case "engine task":
			err = conns[0].AsyncWrite([]byte("x")) // its drain is an engine task
		}
		require.NoError(t, err)

		waitDone(t, l.Done(), 30*time.Second) // the fault shuts the loop down by itself
		err = l.Close()
		require.ErrorIs(t, err, engine.ErrLoopPanicked)
		var pe *tasks.PanicError
		require.ErrorAs(t, err, &pe)
		require.Equal(t, "injected engine fault", pe.Value)
		require.Equal(t, engine.Terminated, l.State())

		for range 2 {
			select {
			case cerr := <-h.closed:
				require.ErrorIs(t, cerr, engine.ErrLoopPanicked)
				require.Same(t, err, cerr, "OnClose gets the loop's cause")
			case <-time.After(30 * time.Second):
				t.Fatal("a connection never got OnClose")
			}
		}
		for _, nc := range peers {
			require.NoError(t, nc.SetReadDeadline(time.Now().Add(30*time.Second)))
			_, rerr := io.ReadAll(nc)
			var ne net.Error
			require.False(t, errors.As(rerr, &ne) && ne.Timeout(), "the peer's connection stayed open")
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_, err = ln.Closed().Await(ctx)
		require.NoError(t, err, "the listener closed")
		require.ErrorIs(t, l.Execute(tasks.Func(func() {})), engine.ErrShutdown)
		require.Equal(t, 1, strings.Count(logs.String(), "the loop's own code panicked"), logs.String())
		require.EqualValues(t, 1, l.Metrics().Panics)
	})
}
