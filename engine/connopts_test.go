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
	require.Equal(t, defaultCloseTimeout, cfg.closeTimeout, "a close is bounded by default")
	require.Equal(t, defaultAsyncWriteLimit, cfg.asyncLimit, "AsyncWrite is bounded by default")
	for _, o := range []ConnOption{WithTimeouts(Timeouts{Close: -time.Second}), WithBufferLimits(BufferLimits{AsyncWrite: -1})} {
		_, err := newConnConfig("tcp", []ConnOption{o})
		require.Error(t, err)
	}
	cfg, err = newConnConfig("tcp", []ConnOption{WithTimeouts(Timeouts{Close: time.Millisecond}), WithBufferLimits(BufferLimits{AsyncWrite: 1})})
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

// TestOptionZeroKeepsDefault: in SocketOptions, BufferLimits and Timeouts a
// zero field keeps its value (the default, or what an earlier option set),
// every field takes effect on its own, and a negative value or low > high
// is an error.
func TestOptionZeroKeepsDefault(t *testing.T) {
	cfg, err := newConnConfig("tcp", []ConnOption{
		WithSocketOptions(SocketOptions{}), WithBufferLimits(BufferLimits{}), WithTimeouts(Timeouts{}),
	})
	require.NoError(t, err)
	require.Equal(t, [2]int{0, 0}, [2]int{cfg.sndBuf, cfg.rcvBuf}, "the kernel's buffer sizes")
	require.Equal(t, [2]int{defaultLowWatermark, defaultHighWatermark}, [2]int{cfg.lowWater, cfg.highWater})
	require.Equal(t, [2]int{defaultKeepLimit, defaultAsyncWriteLimit}, [2]int{cfg.keepLimit, cfg.asyncLimit})
	require.False(t, cfg.idle(), "idle timeouts are off by default")
	require.Equal(t, defaultCloseTimeout, cfg.closeTimeout)
	require.True(t, cfg.noDelay, "TCP_NODELAY is on by default")
	require.False(t, cfg.reusePort)
	require.Zero(t, cfg.keepAlive)
	require.Equal(t, systemBacklog(), cfg.backlog)

	cfg, err = newConnConfig("tcp", []ConnOption{
		WithSocketOptions(SocketOptions{SendBuffer: 8192}), WithSocketOptions(SocketOptions{RecvBuffer: 4096}),
		WithBufferLimits(BufferLimits{LowWatermark: 1}), WithBufferLimits(BufferLimits{HighWatermark: 1 << 20}),
		WithTimeouts(Timeouts{ReadIdle: time.Second}), WithTimeouts(Timeouts{WriteIdle: 2 * time.Second}),
		WithTimeouts(Timeouts{AllIdle: 3 * time.Second}), WithTimeouts(Timeouts{Close: time.Second}),
		WithSocketOptions(SocketOptions{Backlog: 7}), WithSocketOptions(SocketOptions{ReusePort: true}),
		WithSocketOptions(SocketOptions{Nagle: true}), WithSocketOptions(SocketOptions{KeepAlive: time.Minute}),
		WithBufferLimits(BufferLimits{Keep: 5}), WithBufferLimits(BufferLimits{AsyncWrite: 6}),
		WithSocketOptions(SocketOptions{}), WithBufferLimits(BufferLimits{}), WithTimeouts(Timeouts{}),
	})
	require.NoError(t, err)
	require.Equal(t, [2]int{8192, 4096}, [2]int{cfg.sndBuf, cfg.rcvBuf})
	require.Equal(t, [2]int{1, 1 << 20}, [2]int{cfg.lowWater, cfg.highWater})
	require.Equal(t, [4]time.Duration{time.Second, 2 * time.Second, 3 * time.Second, time.Second},
		[4]time.Duration{cfg.readIdle, cfg.writeIdle, cfg.allIdle, cfg.closeTimeout})
	require.Equal(t, [2]int{7, 5}, [2]int{cfg.backlog, cfg.keepLimit})
	require.Equal(t, 6, cfg.asyncLimit)
	require.True(t, cfg.reusePort)
	require.False(t, cfg.noDelay, "Nagle turns TCP_NODELAY off")
	require.Equal(t, time.Minute, cfg.keepAlive)

	for _, o := range []ConnOption{
		WithSocketOptions(SocketOptions{SendBuffer: -1}),
		WithSocketOptions(SocketOptions{RecvBuffer: -1}),
		WithBufferLimits(BufferLimits{LowWatermark: -1}),
		WithBufferLimits(BufferLimits{HighWatermark: 1}),                  // under the default low
		WithBufferLimits(BufferLimits{LowWatermark: 2, HighWatermark: 1}), // low > high
		WithTimeouts(Timeouts{WriteIdle: -2 * time.Second}),
		WithSocketOptions(SocketOptions{Backlog: -1}),
		WithBufferLimits(BufferLimits{Keep: -1}),
	} {
		_, err := newConnConfig("tcp", []ConnOption{o})
		require.Error(t, err)
	}
}

// TestSocketBuffersReachTheSocket: SendBuffer and RecvBuffer set their socket
// option (Linux doubles the value it is given, for bookkeeping).
func TestSocketBuffersReachTheSocket(t *testing.T) {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM, 0)
	require.NoError(t, err)
	defer unix.Close(fd)
	cfg, err := newConnConfig("tcp", []ConnOption{WithSocketOptions(SocketOptions{SendBuffer: 24 << 10, RecvBuffer: 20 << 10})})
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
// and, past it, can be reset); SocketOptions.Backlog sets a shorter one. The kernel
// reports a listener's backlog in TCP_INFO's tcpi_sacked.
func TestListenBacklog(t *testing.T) {
	b, err := os.ReadFile("/proc/sys/net/core/somaxconn")
	require.NoError(t, err)
	somaxconn, err := strconv.Atoi(strings.TrimSpace(string(b)))
	require.NoError(t, err)
	for _, tc := range []struct {
		opts []ConnOption
		want int
	}{{nil, somaxconn}, {[]ConnOption{WithSocketOptions(SocketOptions{Backlog: 16})}, 16}} {
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
