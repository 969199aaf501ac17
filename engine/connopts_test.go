package engine

import (
	"os"
	"strconv"
	"strings"
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

// TestOptionZeroKeepsDefault: in SocketBuffers, Watermarks and IdleTimeouts
// a zero field keeps its value (the default, or what an earlier option
// set), every field takes effect on its own, NoTimeout turns an idle timeout
// off, and a negative value or low > high is an error.
func TestOptionZeroKeepsDefault(t *testing.T) {
	cfg, err := newConnConfig("tcp", []ConnOption{
		WithSocketBuffers(SocketBuffers{}), WithWatermarks(Watermarks{}), WithIdleTimeouts(IdleTimeouts{}),
	})
	require.NoError(t, err)
	require.Equal(t, [2]int{0, 0}, [2]int{cfg.sndBuf, cfg.rcvBuf}, "the kernel's buffer sizes")
	require.Equal(t, [2]int{DefaultLowWatermark, DefaultHighWatermark}, [2]int{cfg.lowWater, cfg.highWater})
	require.False(t, cfg.idle(), "idle timeouts are off by default")

	cfg, err = newConnConfig("tcp", []ConnOption{
		WithSocketBuffers(SocketBuffers{Send: 8192}), WithSocketBuffers(SocketBuffers{Recv: 4096}),
		WithWatermarks(Watermarks{Low: 1}), WithWatermarks(Watermarks{High: 1 << 20}),
		WithIdleTimeouts(IdleTimeouts{Read: time.Second}), WithIdleTimeouts(IdleTimeouts{Write: 2 * time.Second}),
		WithIdleTimeouts(IdleTimeouts{All: 3 * time.Second}),
	})
	require.NoError(t, err)
	require.Equal(t, [2]int{8192, 4096}, [2]int{cfg.sndBuf, cfg.rcvBuf})
	require.Equal(t, [2]int{1, 1 << 20}, [2]int{cfg.lowWater, cfg.highWater})
	require.Equal(t, [3]time.Duration{time.Second, 2 * time.Second, 3 * time.Second},
		[3]time.Duration{cfg.readIdle, cfg.writeIdle, cfg.allIdle})

	cfg, err = newConnConfig("tcp", []ConnOption{
		WithIdleTimeouts(IdleTimeouts{Read: time.Second, Write: time.Second, All: time.Second}),
		WithIdleTimeouts(IdleTimeouts{Read: NoTimeout, All: NoTimeout}),
	})
	require.NoError(t, err)
	require.Equal(t, [3]time.Duration{0, time.Second, 0}, [3]time.Duration{cfg.readIdle, cfg.writeIdle, cfg.allIdle})

	for _, o := range []ConnOption{
		WithSocketBuffers(SocketBuffers{Send: -1}),
		WithSocketBuffers(SocketBuffers{Recv: -1}),
		WithWatermarks(Watermarks{Low: -1}),
		WithWatermarks(Watermarks{High: 1}),         // under the default low
		WithWatermarks(Watermarks{Low: 2, High: 1}), // low > high
		WithIdleTimeouts(IdleTimeouts{Write: -2 * time.Second}),
	} {
		_, err := newConnConfig("tcp", []ConnOption{o})
		require.Error(t, err)
	}
}

// TestSocketBuffersReachTheSocket: each SocketBuffers field sets its socket
// option (Linux doubles the value it is given, for bookkeeping).
func TestSocketBuffersReachTheSocket(t *testing.T) {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM, 0)
	require.NoError(t, err)
	defer unix.Close(fd)
	cfg, err := newConnConfig("tcp", []ConnOption{WithSocketBuffers(SocketBuffers{Send: 24 << 10, Recv: 20 << 10})})
	require.NoError(t, err)
	require.NoError(t, applySocketBuffers(fd, cfg))
	snd, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_SNDBUF)
	require.NoError(t, err)
	rcv, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUF)
	require.NoError(t, err)
	require.Equal(t, [2]int{2 * 24 << 10, 2 * 20 << 10}, [2]int{snd, rcv})
}

// TestListenBacklog: by default a listener's accept queue is as long as the
// system allows (net.core.somaxconn), so a burst of connects as large as
// net.Listen takes is not dropped (the peers then wait out a SYN retransmit
// and, past it, can be reset); WithBacklog sets a shorter one. The kernel
// reports a listener's backlog in TCP_INFO's tcpi_sacked.
func TestListenBacklog(t *testing.T) {
	b, err := os.ReadFile("/proc/sys/net/core/somaxconn")
	require.NoError(t, err)
	somaxconn, err := strconv.Atoi(strings.TrimSpace(string(b)))
	require.NoError(t, err)
	for _, tc := range []struct {
		opts []ConnOption
		want int
	}{{nil, somaxconn}, {[]ConnOption{WithBacklog(16)}, 16}} {
		cfg, err := newConnConfig("tcp", tc.opts)
		require.NoError(t, err)
		fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		require.NoError(t, err)
		require.NoError(t, listenOn(fd, unix.AF_INET, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}, cfg))
		info, err := unix.GetsockoptTCPInfo(fd, unix.IPPROTO_TCP, unix.TCP_INFO)
		unix.Close(fd)
		require.NoError(t, err)
		require.Equal(t, tc.want, int(info.Sacked), "the listener's backlog")
	}
}
