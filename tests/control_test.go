package tests

// Regression tests for the library's control work under a bounded task ring
// (engine.WithMaxPendingTasks): closes, resumes and hand-offs go on the
// loop's control ring, so a task ring the user filled cannot drop them. And
// for the traps of calling a connection's methods off its loop, and of a
// connection half-closed both ways that was never closed.

import (
	"context"
	"errors"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/examples/echo"
	"github.com/ringloop/ringloop/internal/testenv"
)

// ctxWithin returns a context that ends after d (an upper bound for a wait).
func ctxWithin(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// boundedRing is the task ring size the control tests give their loops.
const boundedRing = 16

// TestConnCloseWithFullTaskRing: Close from another goroutine while the
// loop's task ring is full still closes the socket: the peer reads EOF and
// OnClose runs.
func TestConnCloseWithFullTaskRing(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		l := newLoop(t, c, engine.WithMaxPendingTasks(boundedRing, nil))
		r := newRecorder()
		_, peer := acceptOne(t, l, r)
		conn := <-r.opened
		release := testenv.FillTaskRing(t, l)
		require.NoError(t, conn.Close())
		require.NoError(t, conn.CloseWrite()) // a no-op once closing; must not fail either
		release()
		_ = peer.SetReadDeadline(time.Now().Add(30 * time.Second))
		got, err := io.ReadAll(peer)
		require.NoError(t, err, "the peer must read EOF")
		require.Empty(t, got)
		require.NoError(t, waitErr(t, r.closed))
	})
}

// TestResumeWithFullTaskRing: ResumeRead and ResumeAccept from another
// goroutine while the task ring is full take effect: data flows again and
// a new connection is accepted.
func TestResumeWithFullTaskRing(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		l := newLoop(t, c, engine.WithMaxPendingTasks(boundedRing, nil))
		// Two connections share r: room for both of their callbacks.
		r := &recorder{opened: make(chan *engine.Conn, 2), closed: make(chan error, 2)}
		got := make(chan struct{}, 1)
		r.onData = func(*engine.Conn, []byte) {
			select {
			case got <- struct{}{}:
			default:
			}
		}
		ln, peer := acceptOne(t, l, r)
		conn := <-r.opened
		_, err := engine.Submit(l, func() (struct{}, error) {
			conn.PauseRead()
			ln.PauseAccept()
			return struct{}{}, nil
		}).Await(ctxWithin(t, 10*time.Second))
		require.NoError(t, err)
		_, err = peer.Write([]byte("after the pause"))
		require.NoError(t, err)

		release := testenv.FillTaskRing(t, l)
		conn.ResumeRead()
		ln.ResumeAccept()
		release()
		select {
		case <-got:
		case <-time.After(30 * time.Second):
			t.Fatal("reading never resumed")
		}
		testenv.Eventually(t, 30*time.Second, "all the bytes", func() bool { return string(r.bytes()) == "after the pause" })

		second, err := net.Dial("tcp", ln.Addr().String())
		require.NoError(t, err)
		defer second.Close()
		// The listener serves with r, whose opened channel the first
		// connection drained: the second OnOpen proves accepting resumed.
		select {
		case c2 := <-r.opened:
			require.NoError(t, c2.Close())
		case <-time.After(30 * time.Second):
			t.Fatal("accepting never resumed")
		}
		require.NoError(t, conn.Close())
	})
}

// TestHandoffWithFullTaskRing: a connection accepted on one loop and handed
// to another whose task ring is full is served there, not closed. Where the
// rings lack MSG_RING (epoll, profiles before 5.18) it travels as a task,
// on the control ring a full task ring cannot refuse.
func TestHandoffWithFullTaskRing(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		boss := newLoop(t, c)
		worker := newLoop(t, c, engine.WithMaxPendingTasks(boundedRing, nil))
		ln, err := engine.Listen(boss, "tcp", "127.0.0.1:0", echo.Handler{},
			engine.WithWorkers(worker))
		require.NoError(t, err)
		defer ln.Close()
		release := testenv.FillTaskRing(t, worker)
		peer, err := net.Dial("tcp", ln.Addr().String())
		require.NoError(t, err)
		defer peer.Close()
		testenv.Eventually(t, 30*time.Second, "the hand-off", func() bool { return boss.Metrics().Handoffs == 1 })
		release()
		_ = peer.SetDeadline(time.Now().Add(30 * time.Second))
		_, err = peer.Write([]byte("ping"))
		require.NoError(t, err)
		buf := make([]byte, 4)
		_, err = io.ReadFull(peer, buf)
		require.NoError(t, err, "the handed-off connection must be served")
		require.Equal(t, "ping", string(buf))
	})
}

// TestListenerCloseWithFullTaskRing: closing a listener while its loop's task
// ring is full closes it.
func TestListenerCloseWithFullTaskRing(t *testing.T) {
	testenv.ForEachBackend(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		l := newLoop(t, c, engine.WithMaxPendingTasks(boundedRing, nil))
		ln, err := engine.Listen(l, "tcp", "127.0.0.1:0", echo.Handler{})
		require.NoError(t, err)
		release := testenv.FillTaskRing(t, l)
		done := make(chan error, 1)
		go func() { done <- ln.Close() }()
		release()
		select {
		case err := <-done:
			require.NoError(t, err)
		case <-time.After(30 * time.Second):
			t.Fatal("Listener.Close did not return")
		}
		_, err = net.Dial("tcp", ln.Addr().String())
		require.Error(t, err, "a closed listener refuses")
	})
}

// offLoopHandler records OnData bytes and OnClose for the off-loop method
// tests; paused marks the span during which OnData must not run.
type offLoopHandler struct {
	*recorder
	paused    atomic.Bool
	violation atomic.Bool
}

func (h *offLoopHandler) OnData(c *engine.Conn, b []byte) {
	if h.paused.Load() {
		h.violation.Store(true)
	}
	h.recorder.OnData(c, b)
}

// TestConnMethodsOffLoop calls each Conn method from a goroutine other than
// the loop's, under -race: each does what its doc says there (Write sends,
// in order; PauseRead and ResumeRead take effect; Close, Abort and
// CloseWrite hop to the loop; the accessors race with nothing).
func TestConnMethodsOffLoop(t *testing.T) {
	testenv.ForEachBackend(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		l := newLoop(t, c)
		barrier := func() {
			t.Helper()
			_, err := engine.Submit(l, func() (struct{}, error) { return struct{}{}, nil }).Await(ctxWithin(t, 10*time.Second))
			require.NoError(t, err)
		}

		t.Run("WriteAndAccessors", func(t *testing.T) {
			h := &offLoopHandler{recorder: newRecorder()}
			_, peer := acceptOne(t, l, h)
			conn := <-h.opened
			var wg sync.WaitGroup
			wg.Add(2)
			go func() { // readers, racing the loop's own use
				defer wg.Done()
				assert.Equal(t, peer.LocalAddr().String(), conn.RemoteAddr().String())
				assert.Equal(t, peer.RemoteAddr().String(), conn.LocalAddr().String())
				_ = conn.Buffered()
				_ = conn.Writable()
				_ = conn.Value()
			}()
			go func() {
				defer wg.Done()
				conn.SetValue("v")
				for _, s := range []string{"one ", "two ", "three"} {
					n, err := conn.Write([]byte(s))
					assert.NoError(t, err)
					assert.Equal(t, len(s), n)
				}
			}()
			wg.Wait()
			require.Equal(t, "v", conn.Value())
			conn.SetValue(nil)
			require.Nil(t, conn.Value(), "SetValue(nil) removes the value")
			conn.SetValue("v")
			_ = peer.SetReadDeadline(time.Now().Add(30 * time.Second))
			buf := make([]byte, len("one two three"))
			_, err := io.ReadFull(peer, buf)
			require.NoError(t, err, "bytes written off the loop must be sent")
			require.Equal(t, "one two three", string(buf))
			testenv.Eventually(t, 30*time.Second, "Buffered back to 0", func() bool { return conn.Buffered() == 0 })
			require.NoError(t, conn.Close())
			require.NoError(t, waitErr(t, h.closed))
			_, err = conn.Write([]byte("late"))
			require.ErrorIs(t, err, engine.ErrConnClosed)
		})

		t.Run("PauseResume", func(t *testing.T) {
			h := &offLoopHandler{recorder: newRecorder()}
			_, peer := acceptOne(t, l, h)
			conn := <-h.opened
			conn.PauseRead()
			barrier() // the pause ran: the control ring runs before tasks
			h.paused.Store(true)
			_, err := peer.Write([]byte("held"))
			require.NoError(t, err)
			h.paused.Store(false)
			conn.ResumeRead()
			testenv.Eventually(t, 30*time.Second, "the bytes after ResumeRead", func() bool { return string(h.bytes()) == "held" })
			require.False(t, h.violation.Load(), "OnData ran while paused")
			require.NoError(t, conn.Close())
			waitErr(t, h.closed)
		})

		t.Run("CloseWrite", func(t *testing.T) {
			h := &offLoopHandler{recorder: newRecorder()}
			_, peer := acceptOne(t, l, h)
			conn := <-h.opened
			_, err := conn.Write([]byte("last"))
			require.NoError(t, err)
			require.NoError(t, conn.CloseWrite())
			_ = peer.SetReadDeadline(time.Now().Add(30 * time.Second))
			got, err := io.ReadAll(peer)
			require.NoError(t, err)
			require.Equal(t, "last", string(got))
			_, err = peer.Write([]byte("still reading"))
			require.NoError(t, err)
			testenv.Eventually(t, 30*time.Second, "reading after CloseWrite", func() bool { return string(h.bytes()) == "still reading" })
			require.NoError(t, conn.Close())
			waitErr(t, h.closed)
		})

		t.Run("Abort", func(t *testing.T) {
			h := &offLoopHandler{recorder: newRecorder()}
			_, peer := acceptOne(t, l, h)
			conn := <-h.opened
			require.NoError(t, conn.Abort())
			require.ErrorIs(t, waitErr(t, h.closed), engine.ErrAborted)
			_ = peer.SetReadDeadline(time.Now().Add(30 * time.Second))
			_, err := io.ReadAll(peer)
			require.Error(t, err, "an abort resets the connection")
		})
	})
}

// halfCloseBoth shuts the write side when its peer shuts its own, or at open
// when first is set, and records the close.
type halfCloseBoth struct {
	*recorder
	first bool
}

func (h halfCloseBoth) OnOpen(c *engine.Conn) {
	if h.first {
		_, _ = c.Write([]byte("bye"))
		_ = c.CloseWrite()
	}
	h.recorder.OnOpen(c)
}

func (h halfCloseBoth) OnReadClosed(c *engine.Conn) {
	if !h.first {
		_, _ = c.Write([]byte("bye"))
		_ = c.CloseWrite()
	}
}

// TestHalfClosedBothWaysIsClosed: once the peer's FIN has been seen and the
// local write side shut down, in either order, the connection is closed:
// OnClose runs (io.EOF) and the loop holds no connection.
func TestHalfClosedBothWaysIsClosed(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		for _, first := range []bool{false, true} {
			name := "PeerFirst"
			if first {
				name = "LocalFirst"
			}
			t.Run(name, func(t *testing.T) {
				testenv.CheckLeaks(t)
				l := newLoop(t, c)
				h := halfCloseBoth{recorder: newRecorder(), first: first}
				_, peer := acceptOne(t, l, h)
				<-h.opened
				_, err := peer.Write([]byte("hi"))
				require.NoError(t, err)
				if first {
					// Our FIN came first: the peer reads it, then sends its own.
					_ = peer.SetReadDeadline(time.Now().Add(30 * time.Second))
					got, err := io.ReadAll(peer)
					require.NoError(t, err)
					require.Equal(t, "bye", string(got))
				}
				require.NoError(t, peer.(*net.TCPConn).CloseWrite())
				err = waitErr(t, h.closed)
				require.True(t, errors.Is(err, io.EOF), "OnClose: %v", err)
				if !first {
					_ = peer.SetReadDeadline(time.Now().Add(30 * time.Second))
					got, err := io.ReadAll(peer)
					require.NoError(t, err)
					require.Equal(t, "bye", string(got))
				}
				require.Equal(t, "hi", string(h.bytes()))
				testenv.Eventually(t, 30*time.Second, "no live connection", func() bool { return l.Metrics().Connections == 0 })
			})
		}
	})
}
