package netconn_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"os"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/netconn"
)

// TestWriteBlocksUnderBackpressure writes far more than the connection can
// hold to a peer that does not read: Write must block (here until its
// deadline) with a bounded amount taken, and every byte it took must then
// reach the peer.
func TestWriteBlocksUnderBackpressure(t *testing.T) {
	const (
		total = 16 << 20
		limit = 8 << 10
	)
	small := netconn.WithConnOptions(engine.WithSocketOptions(engine.SocketOptions{SendBuffer: 16 << 10, RecvBuffer: 16 << 10}), engine.WithBufferLimits(engine.BufferLimits{LowWatermark: 8 << 10, HighWatermark: 16 << 10}))
	forEach(t, func(t *testing.T, loops engine.Loops) {
		ln := listen(t, loops, small, netconn.WithLimits(netconn.Limits{Read: limit, Write: limit}))
		w, r, err := pipe(t, loops, ln, small, netconn.WithLimits(netconn.Limits{Read: limit, Write: limit}))
		require.NoError(t, err)
		defer r.Close()

		msg := make([]byte, total)
		for i := range 251 {
			msg[i] = byte(i)
		}
		for k := 251; k < total; k *= 2 {
			copy(msg[k:], msg[:k])
		}
		require.NoError(t, w.SetWriteDeadline(time.Now().Add(100*time.Millisecond)))
		n, err := w.Write(msg)
		require.ErrorIs(t, err, os.ErrDeadlineExceeded)
		var ne net.Error
		require.True(t, errors.As(err, &ne) && ne.Timeout())
		// Taken: at most the write limit, the engine's buffer past its high
		// watermark and what the kernel's socket buffers hold.
		require.Less(t, n, 8<<20, "Write took %d bytes from a peer that reads nothing", n)
		require.NoError(t, w.Close())

		got, err := io.ReadAll(r)
		require.NoError(t, err)
		require.Equal(t, n, len(got), "bytes taken by Write vs bytes delivered")
		require.True(t, bytes.Equal(msg[:n], got))
	})
}

// TestAcceptQueue accepts more connections than the accept queue holds: the
// listener pauses and resumes accepting, and no connection is lost.
func TestAcceptQueue(t *testing.T) {
	forEach(t, func(t *testing.T, loops engine.Loops) {
		ln := listen(t, loops, netconn.WithLimits(netconn.Limits{AcceptQueue: 2}))
		const n = 24
		clients := make([]net.Conn, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				c, err := net.DialTimeout("tcp", ln.Addr().String(), 10*time.Second)
				if err == nil {
					_, err = c.Write([]byte{byte(i)})
				}
				if err != nil {
					t.Errorf("dial %d: %v", i, err)
				}
				clients[i] = c
			}()
		}
		seen := make(map[byte]bool)
		for range n {
			c, err := ln.Accept()
			require.NoError(t, err)
			require.NoError(t, c.SetReadDeadline(time.Now().Add(20*time.Second)))
			b := make([]byte, 1)
			_, err = io.ReadFull(c, b)
			require.NoError(t, err)
			seen[b[0]] = true
			require.NoError(t, c.Close())
		}
		wg.Wait()
		require.Len(t, seen, n)
		for _, c := range clients {
			if c != nil {
				c.Close()
			}
		}
	})
}

// TestCloseUnblocks: Close wakes a pending Read and Accept with net.ErrClosed.
func TestCloseUnblocks(t *testing.T) {
	forEach(t, func(t *testing.T, loops engine.Loops) {
		ln, err := netconn.Listen(loops, "tcp", "127.0.0.1:0")
		require.NoError(t, err)
		c1, c2, err := pipe(t, loops, ln)
		require.NoError(t, err)
		defer c1.Close()
		rerr := make(chan error, 1)
		go func() { _, err := c2.Read(make([]byte, 1)); rerr <- err }()
		aerr := make(chan error, 1)
		go func() { _, err := ln.Accept(); aerr <- err }()
		require.NoError(t, c2.Close())
		require.ErrorIs(t, <-rerr, net.ErrClosed)
		require.NoError(t, ln.Close())
		require.ErrorIs(t, <-aerr, net.ErrClosed)
		require.ErrorIs(t, c2.Close(), net.ErrClosed)
		// The socket is shut down by the time Close returns.
		c, err := netconn.Dial(context.Background(), loops, "tcp", ln.Addr().String())
		if err == nil {
			c.Close()
		}
		require.ErrorIs(t, err, syscall.ECONNREFUSED, "dialing a closed listener")
	})
}
