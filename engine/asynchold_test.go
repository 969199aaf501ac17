package engine_test

import (
	"io"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/internal/testenv"
)

// holdPeer opens a connection to a fresh listener and returns the engine's
// side and the peer's.
func holdPeer(t *testing.T, c testenv.Combo, opts ...engine.ConnOption) (*engine.Loop, *engine.Conn, net.Conn) {
	t.Helper()
	l := newLoop(t, c)
	opened := make(openedConn, 1)
	ln, err := engine.Listen(l, "tcp", "127.0.0.1:0", opened, opts...)
	require.NoError(t, err)
	t.Cleanup(func() { _ = ln.Close() })
	peer, err := net.Dial("tcp", ln.Addr().String())
	require.NoError(t, err)
	t.Cleanup(func() { _ = peer.Close() })
	require.NoError(t, peer.SetReadDeadline(time.Now().Add(30*time.Second)))
	return l, <-opened, peer
}

// TestHoldAsync: bytes AsyncWrite accepts while the loop holds them stay out
// of the stream, behind everything the loop writes, until released; off the loop
// HoldAsync is an error.
func TestHoldAsync(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		l, conn, peer := holdPeer(t, c)
		release, err := conn.HoldAsync()
		require.Error(t, err, "off the loop")
		require.Nil(t, release)
		onLoop(t, l, func() error {
			if release, err = conn.HoldAsync(); err != nil {
				return err
			}
			_, err := conn.Write([]byte("first-"))
			return err
		})
		require.NoError(t, conn.AsyncWrite([]byte("async-")))
		// The drain runs before this task (the control ring goes first):
		// held, it leaves the bytes where they are.
		onLoop(t, l, func() error {
			if _, err := conn.Write([]byte("second-")); err != nil {
				return err
			}
			release()
			_, err := conn.Write([]byte("third"))
			return err
		})
		want := "first-second-async-third"
		got := make([]byte, len(want))
		_, err = io.ReadFull(peer, got)
		require.NoError(t, err)
		require.Equal(t, want, string(got))

		// Released: AsyncWrite is drained as before.
		require.NoError(t, conn.AsyncWrite([]byte("after")))
		got = make([]byte, 5)
		_, err = io.ReadFull(peer, got)
		require.NoError(t, err)
		require.Equal(t, "after", string(got))
	})
}

// TestHoldAsyncLimit: held bytes count against the async write limit.
func TestHoldAsyncLimit(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		l, conn, peer := holdPeer(t, c, engine.WithBufferLimits(engine.BufferLimits{AsyncWrite: 1024}))
		release := onLoop(t, l, func() func() { r, _ := conn.HoldAsync(); return r })
		require.NotNil(t, release)
		big := make([]byte, 1024)
		require.NoError(t, conn.AsyncWrite(big))
		onLoop(t, l, func() bool { return true }) // the held drain has run
		require.ErrorIs(t, conn.AsyncWrite([]byte{1}), engine.ErrWriteBufferFull)
		onLoop(t, l, func() bool { release(); return true })
		_, err := io.ReadFull(peer, make([]byte, 1024))
		require.NoError(t, err)
	})
}

// TestDiscardAsync: the held bytes are dropped and counted; a close sends
// what is held when nothing discarded it.
func TestDiscardAsync(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		l, conn, peer := holdPeer(t, c)
		release := onLoop(t, l, func() func() { r, _ := conn.HoldAsync(); return r })
		require.NotNil(t, release)
		require.NoError(t, conn.AsyncWrite([]byte("dropped")))
		n := onLoop(t, l, func() int {
			n := conn.DiscardAsync()
			release()
			_, _ = conn.Write([]byte("kept-"))
			_, _ = conn.HoldAsync()
			return n
		})
		require.Equal(t, len("dropped"), n)
		require.NoError(t, conn.AsyncWrite([]byte("held")))
		onLoop(t, l, func() error { return conn.Close() })
		got, err := io.ReadAll(peer)
		require.NoError(t, err)
		require.Equal(t, "kept-held", string(got))
	})
}
