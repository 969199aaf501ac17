package main

import (
	"bytes"
	"crypto/sha256"
	"io"
	"math/rand/v2"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/internal/testenv"
)

// echoUpstream is a net echo server: it sends back what it reads and
// half-closes once the proxy half-closed towards it.
func echoUpstream(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				// Through a buffer: io.Copy between two TCP sockets would
				// splice through a pipe the runtime caches, taken for a leak.
				_, _ = io.CopyBuffer(struct{ io.Writer }{c}, struct{ io.Reader }{c}, make([]byte, 64<<10))
				_ = c.(*net.TCPConn).CloseWrite()
				_, _ = io.Copy(io.Discard, c)
			}()
		}
	}()
	return ln.Addr().String()
}

// TestProxy moves 100 MiB each way through the proxy to an echo upstream:
// the client reads back exactly what it sent (SHA-256), then EOF, which
// crossed the proxy twice as half-closes; afterwards the proxy holds no
// connection.
func TestProxy(t *testing.T) {
	total := 100 << 20
	if testing.Short() {
		total = 8 << 20
	}
	testenv.ForEachBackend(t, func(t *testing.T, c testenv.Combo) {
		up := echoUpstream(t) // first: it starts Go's netpoller, whose fds stay
		testenv.CheckLeaks(t)
		l, err := engine.New(c.Options()...)
		require.NoError(t, err)
		defer func() { require.NoError(t, l.Close()) }()
		ln, err := Serve(l, "127.0.0.1:0", up)
		require.NoError(t, err)
		defer ln.Close()

		conn, err := net.Dial("tcp", ln.Addr().String())
		require.NoError(t, err)
		defer conn.Close()
		_ = conn.SetDeadline(time.Now().Add(5 * time.Minute)) // an upper bound, not a speed check

		sent := make(chan []byte, 1)
		go func() {
			h := sha256.New()
			rng := rand.NewChaCha8([32]byte{1})
			buf := make([]byte, 256<<10)
			for n := 0; n < total; n += len(buf) {
				_, _ = rng.Read(buf)
				h.Write(buf)
				if _, err := conn.Write(buf); err != nil {
					sent <- nil
					return
				}
			}
			_ = conn.(*net.TCPConn).CloseWrite()
			sent <- h.Sum(nil)
		}()
		h := sha256.New()
		n, err := io.Copy(h, conn) // until the EOF the upstream's half-close becomes
		require.NoError(t, err)
		require.EqualValues(t, total, n)
		want := <-sent
		require.NotNil(t, want, "writing to the proxy failed")
		require.True(t, bytes.Equal(want, h.Sum(nil)), "the bytes differ")
		testenv.Eventually(t, 30*time.Second, "both proxy connections closed",
			func() bool { return l.Metrics().Connections == 0 })
	})
}
