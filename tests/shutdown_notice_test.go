package tests

// The loop-shutdown notice (engine.ShutdownHandler): a handler's last word
// reaches the peer before the connection closes, a handler without it is
// closed as before, frame.Split passes it on, and a goodbye a peer does not
// read is cut at the flush bound.

import (
	"bufio"
	"context"
	"io"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/frame"
	"github.com/ringloop/ringloop/internal/testenv"
)

// byeHandler writes bye in OnShutdown, on the loop, and counts the calls.
type byeHandler struct {
	*recorder
	bye      []byte
	shutdown chan bool // OnShutdown ran on the connection's loop
}

func newByeHandler(bye []byte) byeHandler {
	return byeHandler{newRecorder(), bye, make(chan bool, 4)}
}

func (h byeHandler) OnShutdown(c *engine.Conn) {
	h.shutdown <- c.Loop().InEventLoop()
	_, _ = c.Write(h.bye)
}

// shutdowns are the ways a loop is shut down, each a graceful close of its
// connections.
var shutdowns = []struct {
	name string
	stop func(l *engine.Loop) error
}{
	{"Shutdown", func(l *engine.Loop) error { return l.Shutdown(context.Background()) }},
	{"Close", (*engine.Loop).Close},
	{"ShutdownGracefully", func(l *engine.Loop) error {
		if err := l.ShutdownGracefully(20*time.Millisecond, lifeWait); err != nil {
			return err
		}
		return l.Shutdown(context.Background())
	}},
}

// readAllUntilEOF reads the peer's side until EOF, within lifeWait.
func readAllUntilEOF(t *testing.T, peer net.Conn) string {
	t.Helper()
	require.NoError(t, peer.SetReadDeadline(time.Now().Add(lifeWait)))
	got, err := io.ReadAll(peer)
	require.NoError(t, err, "the connection must end with EOF, not a reset")
	return string(got)
}

// TestShutdownHandlerSaysGoodbye: OnShutdown runs on the loop once per open
// connection when the loop shuts down; what it writes arrives whole before
// EOF, and OnClose gets ErrShutdown.
func TestShutdownHandlerSaysGoodbye(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		for _, s := range shutdowns {
			t.Run(s.name, func(t *testing.T) {
				testenv.CheckLeaks(t)
				l, err := engine.New(c.Options()...)
				require.NoError(t, err)
				h := newByeHandler([]byte("going away\n"))
				_, peer := acceptOne(t, l, h)
				recv(t, h.opened, "OnOpen")
				require.NoError(t, s.stop(l))
				require.Equal(t, "going away\n", readAllUntilEOF(t, peer))
				require.True(t, recv(t, h.shutdown, "OnShutdown"), "OnShutdown runs on the loop")
				require.ErrorIs(t, waitErr(t, h.closed), engine.ErrShutdown)
				require.Empty(t, h.shutdown, "OnShutdown runs once")
			})
		}
	})
}

// TestShutdownWithoutHandlerUnchanged: a handler without OnShutdown is closed
// as it stands: the peer reads EOF and nothing else, OnClose gets
// ErrShutdown.
func TestShutdownWithoutHandlerUnchanged(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		l, err := engine.New(c.Options()...)
		require.NoError(t, err)
		r := newRecorder()
		_, peer := acceptOne(t, l, r)
		recv(t, r.opened, "OnOpen")
		require.NoError(t, l.Close())
		require.Equal(t, "", readAllUntilEOF(t, peer))
		require.ErrorIs(t, waitErr(t, r.closed), engine.ErrShutdown)
	})
}

// lineBye is a frame.Handler with OnShutdown: frame.Split must pass it on.
type lineBye struct {
	closed chan error
	opened chan struct{}
}

func (h lineBye) OnOpen(*engine.Conn) { h.opened <- struct{}{} }
func (h lineBye) OnFrame(c *engine.Conn, line []byte) {
	_, _ = c.Write(append(append([]byte("echo "), line...), '\n'))
}
func (h lineBye) OnClose(_ *engine.Conn, err error) { h.closed <- err }
func (h lineBye) OnShutdown(c *engine.Conn)         { _, _ = c.Write([]byte("bye\n")) }

// TestShutdownNoticeThroughFrameSplit: the frame handler's OnShutdown is
// reached through frame.Split, after the frames already answered.
func TestShutdownNoticeThroughFrameSplit(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		l, err := engine.New(c.Options()...)
		require.NoError(t, err)
		h := lineBye{make(chan error, 1), make(chan struct{}, 1)}
		_, peer := acceptOne(t, l, frame.Split(bufio.ScanLines, h))
		recv(t, h.opened, "OnOpen")
		_, err = peer.Write([]byte("one\n"))
		require.NoError(t, err)
		require.NoError(t, peer.SetReadDeadline(time.Now().Add(lifeWait)))
		line, err := bufio.NewReader(peer).ReadString('\n')
		require.NoError(t, err)
		require.Equal(t, "echo one\n", line)
		require.NoError(t, l.Close())
		require.Equal(t, "bye\n", readAllUntilEOF(t, peer))
		require.ErrorIs(t, waitErr(t, h.closed), engine.ErrShutdown)
	})
}

// TestShutdownGoodbyeCutAtBound: a goodbye larger than the socket buffers,
// to a peer that does not read, is cut once the flush bound passes (the
// shutdown's timeout, here shorter than the close timeout, but never under
// a second): the connection is reset and OnClose gets ErrCloseTimeout, and
// the loop terminates.
func TestShutdownGoodbyeCutAtBound(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		l, err := engine.New(c.Options()...)
		require.NoError(t, err)
		h := newByeHandler(make([]byte, 64<<20))
		_, peer := acceptOne(t, l, h)
		recv(t, h.opened, "OnOpen")
		start := time.Now()
		require.NoError(t, l.ShutdownGracefully(0, 10*time.Millisecond))
		recv(t, l.Done(), "the loop to terminate")
		require.ErrorIs(t, waitErr(t, h.closed), engine.ErrCloseTimeout)
		require.GreaterOrEqual(t, time.Since(start), time.Second, "the flush gets at least a second")
		_ = peer.Close()
	})
}
