package client

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// echoServer echoes every connection; corrupt, when set, flips the first
// byte it echoes on each connection.
func echoServer(t *testing.T, corrupt bool) string {
	t.Helper()
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
				buf := make([]byte, 4096)
				first := true
				for {
					n, err := c.Read(buf)
					if err != nil {
						return
					}
					if corrupt && first {
						buf[0] ^= 0xff
					}
					first = false
					if _, err := c.Write(buf[:n]); err != nil {
						return
					}
				}
			}()
		}
	}()
	return ln.Addr().String()
}

// TestEchoVerified: Verified holds only when every message of every
// connection was compared and matched; a server that corrupts one byte
// fails the run; a run that does not verify is not Verified; a run too short
// for its connections still checks one message each.
func TestEchoVerified(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	good := echoServer(t, false)
	res, err := RunEcho(ctx, EchoConfig{Addr: good, Conns: 4, Size: 64, Duration: 20 * time.Millisecond, Verify: true})
	require.NoError(t, err)
	require.True(t, res.Verified)
	require.Equal(t, res.Total, res.Checked)
	require.GreaterOrEqual(t, res.Checked, int64(4))

	res, err = RunEcho(ctx, EchoConfig{Addr: good, Conns: 4, Size: 64, Duration: 20 * time.Millisecond})
	require.NoError(t, err)
	require.False(t, res.Verified, "nothing was checked")
	require.Zero(t, res.Checked)

	res, err = RunEcho(ctx, EchoConfig{Addr: good, Conns: 4, Size: 64, Verify: true}) // over before it starts
	require.NoError(t, err)
	require.True(t, res.Verified)
	require.EqualValues(t, 4, res.Checked, "one message per connection")

	_, err = RunEcho(ctx, EchoConfig{Addr: echoServer(t, true), Conns: 2, Size: 64, Duration: 20 * time.Millisecond, Verify: true})
	require.ErrorContains(t, err, "differ")
}
