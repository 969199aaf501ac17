package engine

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

func TestReliabilityOptionsValidate(t *testing.T) {
	cfg, err := newConnConfig("tcp", nil)
	require.NoError(t, err)
	require.Equal(t, DefaultCloseTimeout, cfg.closeTimeout, "a close is bounded by default")
	require.Equal(t, DefaultAsyncWriteLimit, cfg.asyncLimit, "AsyncWrite is bounded by default")
	for _, o := range []ConnOption{WithCloseTimeout(0), WithCloseTimeout(-time.Second), WithAsyncWriteLimit(0), WithAsyncWriteLimit(-1)} {
		_, err := newConnConfig("tcp", []ConnOption{o})
		require.Error(t, err)
	}
	cfg, err = newConnConfig("tcp", []ConnOption{WithCloseTimeout(time.Millisecond), WithAsyncWriteLimit(1)})
	require.NoError(t, err)
	require.Equal(t, time.Millisecond, cfg.closeTimeout)
	require.Equal(t, 1, cfg.asyncLimit)
}

// TestLiteralTargetsNeedNoLookup: addresses that are already numeric (or a
// path) are used as they are; a host name is left to the resolver.
func TestLiteralTargetsNeedNoLookup(t *testing.T) {
	for _, tc := range []struct {
		network, addr string
		literal       bool
		family        int
	}{
		{"tcp", "127.0.0.1:80", true, unix.AF_INET},
		{"tcp", "[::1]:80", true, unix.AF_INET6},
		{"tcp", ":80", true, unix.AF_INET6},
		{"tcp4", ":80", true, unix.AF_INET},
		{"unix", "/tmp/x.sock", true, unix.AF_UNIX},
		{"tcp", "example.invalid:80", false, 0},
		{"tcp", "localhost:80", false, 0},
	} {
		ts, literal, err := literalTargets(tc.network, tc.addr)
		require.NoError(t, err, tc.addr)
		require.Equal(t, tc.literal, literal, tc.addr)
		if literal {
			require.Len(t, ts, 1)
			require.Equal(t, tc.family, ts[0].family, tc.addr)
		}
	}
	_, _, err := literalTargets("tcp", "no-port")
	require.Error(t, err)
}
