package netconn_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"io"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/netconn"
)

// TestCloseWrite: CloseWrite half-closes. The peer (a plain net connection)
// reads every byte written before it, then EOF; the other direction still
// flows: the peer writes afterwards and the ringloop side reads it, then
// EOF when the peer closes. A Write after CloseWrite fails with EPIPE, a
// second CloseWrite is a no-op, one after Close fails. Run for a dialed and
// an accepted connection.
func TestCloseWrite(t *testing.T) {
	forEach(t, func(t *testing.T, loops engine.Loops) {
		t.Run("dialed", func(t *testing.T) {
			std, err := net.Listen("tcp", "127.0.0.1:0")
			require.NoError(t, err)
			defer std.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			nc, err := netconn.Dial(ctx, loops, "tcp", std.Addr().String())
			require.NoError(t, err)
			defer nc.Close()
			peer, err := std.Accept()
			require.NoError(t, err)
			defer peer.Close()
			requireHalfClose(t, nc, peer)
		})
		t.Run("accepted", func(t *testing.T) {
			ln := listen(t, loops)
			peer, err := net.DialTimeout("tcp", ln.Addr().String(), 30*time.Second)
			require.NoError(t, err)
			defer peer.Close()
			c, err := ln.Accept()
			require.NoError(t, err)
			defer c.Close()
			requireHalfClose(t, c.(*netconn.Conn), peer)
		})
	})
}

func requireHalfClose(t *testing.T, nc *netconn.Conn, peer net.Conn) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	require.NoError(t, peer.SetDeadline(deadline))
	require.NoError(t, nc.SetDeadline(deadline))

	// More than the socket buffers hold, so some is still queued on the
	// ringloop side when CloseWrite is called: it must go out before EOF.
	sent := make([]byte, 4<<20)
	_, _ = rand.Read(sent)
	got := make(chan []byte, 1)
	go func() {
		b, _ := io.ReadAll(peer) // until EOF: the half-close
		got <- b
	}()
	n, err := nc.Write(sent)
	require.NoError(t, err)
	require.Equal(t, len(sent), n)
	require.NoError(t, nc.CloseWrite())
	require.NoError(t, nc.CloseWrite(), "a second CloseWrite")
	select {
	case b := <-got:
		require.True(t, bytes.Equal(sent, b), "the peer read %d of %d bytes, then EOF", len(b), len(sent))
	case <-time.After(30 * time.Second):
		t.Fatal("the peer never read EOF after CloseWrite")
	}
	_, err = nc.Write([]byte("late"))
	require.ErrorIs(t, err, syscall.EPIPE, "a Write after CloseWrite")

	// The other direction still flows.
	_, err = peer.Write([]byte("still here"))
	require.NoError(t, err)
	buf := make([]byte, 10)
	_, err = io.ReadFull(nc, buf)
	require.NoError(t, err)
	require.Equal(t, "still here", string(buf))
	require.NoError(t, peer.(*net.TCPConn).CloseWrite())
	_, err = nc.Read(buf)
	require.True(t, errors.Is(err, io.EOF), "after the peer's half-close: %v", err)
	require.NoError(t, nc.Close())
	require.ErrorIs(t, nc.CloseWrite(), net.ErrClosed, "CloseWrite after Close")
}
