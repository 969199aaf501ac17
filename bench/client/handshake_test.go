package client

import (
	"context"
	"crypto/tls"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ringloop/ringloop/bench/peers"
)

// tlsEchoServer echoes over TLS 1.3 with session tickets on (a client with
// a cache could resume) and counts the full handshakes it completes;
// corrupt flips the first byte it echoes on each connection.
func tlsEchoServer(t *testing.T, corrupt bool) (string, *atomic.Int64) {
	t.Helper()
	cfg, err := peers.TLSServerConfig()
	require.NoError(t, err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { ln.Close() })
	var full atomic.Int64
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				tc := tls.Server(c, cfg)
				defer tc.Close()
				if tc.Handshake() != nil {
					return
				}
				if !tc.ConnectionState().DidResume {
					full.Add(1)
				}
				buf := make([]byte, 4096)
				first := true
				for {
					n, err := tc.Read(buf)
					if err != nil {
						return
					}
					if corrupt && first {
						buf[0] ^= 0xff
					}
					first = false
					if _, err := tc.Write(buf[:n]); err != nil {
						return
					}
				}
			}()
		}
	}()
	return ln.Addr().String(), &full
}

// TestHandshakes: every connection is a full handshake the server
// completes, every dialer makes one at least however short the run, the
// counts add up, and a wrong echo fails the run.
func TestHandshakes(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	addr, full := tlsEchoServer(t, false)
	res, err := RunHandshakes(ctx, HandshakeConfig{Addr: addr, Dialers: 4, Duration: 50 * time.Millisecond})
	require.NoError(t, err)
	require.GreaterOrEqual(t, res.Total, int64(4), "one per dialer at least")
	require.LessOrEqual(t, res.Handshakes, res.Total)
	require.EqualValues(t, res.Handshakes, res.Latency.Count)
	require.Equal(t, res.Total, full.Load(), "the server completed every handshake, none resumed")

	res, err = RunHandshakes(ctx, HandshakeConfig{Addr: addr, Dialers: 3}) // over before it starts
	require.NoError(t, err)
	require.EqualValues(t, 3, res.Total)

	bad, _ := tlsEchoServer(t, true)
	_, err = RunHandshakes(ctx, HandshakeConfig{Addr: bad, Dialers: 2, Duration: 20 * time.Millisecond})
	require.ErrorContains(t, err, "differ")
	_, err = RunHandshakes(ctx, HandshakeConfig{Addr: addr})
	require.Error(t, err, "no dialers")
}

// TestIdleTLS: the idle holder's warm-up makes its full handshakes, then
// every idle connection completes one and echoes, and all stay open until
// closed.
func TestIdleTLS(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	addr, full := tlsEchoServer(t, false)
	require.NoError(t, Warm(ctx, addr, 10, ProtoTLSEcho))
	require.EqualValues(t, warmHandshakes+1, full.Load(), "the warm-up's handshakes and its exchange connection")
	closeAll, err := Idle(ctx, addr, 40, ProtoTLSEcho)
	require.NoError(t, err)
	require.EqualValues(t, warmHandshakes+1+40, full.Load())
	closeAll()

	_, err = Idle(ctx, echoServer(t, false), 4, ProtoTLSEcho)
	require.ErrorContains(t, err, "TLS handshake", "a server that speaks no TLS")
	closeAll, err = Idle(ctx, echoServer(t, false), 8, ProtoEcho)
	require.NoError(t, err, "plain echo still works")
	closeAll()
}
