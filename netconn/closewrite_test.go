package netconn_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net"
	"sync/atomic"
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
	pr := &progressReader{r: peer}
	go func() {
		b, _ := io.ReadAll(pr) // until EOF: the half-close
		got <- b
	}()
	n, err := nc.Write(sent)
	require.NoError(t, err, "Write took %d of %d bytes; %s", n, len(sent), pr)
	require.Equal(t, len(sent), n)
	require.NoError(t, nc.CloseWrite())
	require.NoError(t, nc.CloseWrite(), "a second CloseWrite")
	select {
	case b := <-got:
		require.True(t, bytes.Equal(sent, b), "the peer read %d of %d bytes, then EOF", len(b), len(sent))
	case <-time.After(30 * time.Second):
		t.Fatalf("the peer never read EOF after CloseWrite; %s", pr)
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

// progressReader counts what a reader returned and when it last returned
// something, so that a stalled transfer says whether it stopped or only
// crawled.
type progressReader struct {
	r    io.Reader
	n    atomic.Int64
	last atomic.Int64 // unix ns of the last read that returned bytes
}

func (p *progressReader) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	if n > 0 {
		p.n.Add(int64(n))
		p.last.Store(time.Now().UnixNano())
	}
	return n, err
}

func (p *progressReader) String() string {
	last := p.last.Load()
	if last == 0 {
		return "the peer had read nothing"
	}
	return fmt.Sprintf("the peer had read %d bytes, the last of them %v ago", p.n.Load(), time.Since(time.Unix(0, last)).Round(time.Millisecond))
}
