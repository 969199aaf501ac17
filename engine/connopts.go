package engine

import (
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// ConnOption configures Listen and Dial and the connections they make.
type ConnOption func(*connConfig) error

type connConfig struct {
	network   string
	backlog   int
	reusePort bool
	chooser   func() *Loop
	noDelay   bool
	keepAlive time.Duration
	sndBuf    int
	rcvBuf    int
	highWater int
	lowWater  int
	readIdle  time.Duration
	writeIdle time.Duration
	allIdle   time.Duration
	observers []ConnObserver

	closeTimeout time.Duration
	asyncLimit   int
	keepLimit    int
	resolver     *net.Resolver
}

// Connection defaults (Netty's, where it has one).
const (
	DefaultHighWatermark = 64 << 10
	DefaultLowWatermark  = 32 << 10
	// DefaultCloseTimeout bounds a graceful Close against a peer that does
	// not read: past it the connection is aborted (ErrCloseTimeout).
	DefaultCloseTimeout = 5 * time.Second
	// DefaultAsyncWriteLimit bounds the bytes a connection holds for
	// AsyncWrite (queued and not yet sent).
	DefaultAsyncWriteLimit = 4 << 20
)

func newConnConfig(network string, opts []ConnOption) (*connConfig, error) {
	c := &connConfig{
		network:   network,
		backlog:   systemBacklog(),
		noDelay:   true,
		highWater: DefaultHighWatermark,
		lowWater:  DefaultLowWatermark,

		closeTimeout: DefaultCloseTimeout,
		asyncLimit:   DefaultAsyncWriteLimit,
		keepLimit:    DefaultKeepLimit,
	}
	for _, o := range opts {
		if err := o(c); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// idle reports whether any idle timeout is on, so traffic records its time
// (a clock read) only when something will look at it.
func (c *connConfig) idle() bool { return c.readIdle > 0 || c.writeIdle > 0 || c.allIdle > 0 }

// WithBacklog sets the listen backlog: how many connections the kernel
// queues for accept. The default is the system's limit (net.core.somaxconn),
// as with net.Listen and Netty; the kernel lowers a larger n to that limit.
func WithBacklog(n int) ConnOption {
	return func(c *connConfig) error {
		if n <= 0 {
			return fmt.Errorf("engine: backlog %d (expected > 0)", n)
		}
		c.backlog = n
		return nil
	}
}

// WithReusePort sets SO_REUSEPORT on the listening socket, so that several
// sockets (of loops or processes) may listen on one port; it means that and
// no more wherever a ConnOption goes. loopgroup.WithListenerPerLoop opens
// one such socket per loop of a group.
func WithReusePort() ConnOption {
	return func(c *connConfig) error { c.reusePort = true; return nil }
}

// WithWorkers serves each accepted connection on loops.Next() (Netty's
// child group: a loop group, or one loop); without it the accepting loop
// serves them.
func WithWorkers(loops Loops) ConnOption {
	return func(c *connConfig) error {
		if loops != nil {
			c.chooser = loops.Next
		}
		return nil
	}
}

// WithNoDelay sets TCP_NODELAY (default on).
func WithNoDelay(on bool) ConnOption {
	return func(c *connConfig) error { c.noDelay = on; return nil }
}

// WithKeepAlive turns TCP keep-alive on with the given idle time and
// interval (0: off, the default).
func WithKeepAlive(d time.Duration) ConnOption {
	return func(c *connConfig) error {
		if d < 0 {
			return fmt.Errorf("engine: keep-alive %v (expected >= 0)", d)
		}
		c.keepAlive = d
		return nil
	}
}

// SocketBuffers sets the kernel's socket buffer sizes in bytes. A zero
// field keeps its current value: the kernel's default (net.core.wmem_default
// and rmem_default, auto-tuned for TCP) unless an earlier option set it.
type SocketBuffers struct {
	Send int // SO_SNDBUF
	Recv int // SO_RCVBUF
}

// WithSocketBuffers sets SO_SNDBUF and SO_RCVBUF; a zero field keeps the
// kernel's size (setting one turns the kernel's auto-tuning off for it).
func WithSocketBuffers(b SocketBuffers) ConnOption {
	return func(c *connConfig) error {
		if b.Send < 0 || b.Recv < 0 {
			return fmt.Errorf("engine: socket buffers %+v (expected sizes >= 0; 0 keeps the kernel's)", b)
		}
		c.sndBuf = keep(c.sndBuf, b.Send)
		c.rcvBuf = keep(c.rcvBuf, b.Recv)
		return nil
	}
}

// Watermarks bounds a connection's outbound buffer (Netty's
// WriteBufferWaterMark): past High bytes the connection turns unwritable
// (OnWritabilityChanged), under Low it turns writable again. A zero field
// keeps its current value: DefaultLowWatermark and DefaultHighWatermark
// unless an earlier option set it.
type Watermarks struct {
	Low  int
	High int
}

// WithWatermarks sets the write watermarks; a zero field keeps its default
// (32 KiB low, 64 KiB high). The result must have 0 < Low <= High.
func WithWatermarks(w Watermarks) ConnOption {
	return func(c *connConfig) error {
		if w.Low < 0 || w.High < 0 {
			return fmt.Errorf("engine: watermarks %+v (expected >= 0; 0 keeps the default)", w)
		}
		low, high := keep(c.lowWater, w.Low), keep(c.highWater, w.High)
		if low > high {
			return fmt.Errorf("engine: watermarks low %d > high %d (a zero field keeps the default low %d, high %d; set both)",
				low, high, DefaultLowWatermark, DefaultHighWatermark)
		}
		c.lowWater, c.highWater = low, high
		return nil
	}
}

// NoTimeout in a field of IdleTimeouts turns that timeout off (the same
// spelling and value as httpserver.NoTimeout).
const NoTimeout time.Duration = -1

// IdleTimeouts are Netty's IdleStateHandler times: OnIdle(ReadIdle) after
// Read with nothing received, OnIdle(WriteIdle) after Write with nothing
// sent, OnIdle(AllIdle) after All with neither. Every one is off by default.
// A zero field keeps its current value (off unless an earlier option set
// it); NoTimeout turns one off.
type IdleTimeouts struct {
	Read  time.Duration
	Write time.Duration
	All   time.Duration
}

// WithIdleTimeouts sets the idle timeouts; a zero field keeps its current
// value (off by default), NoTimeout turns one off.
func WithIdleTimeouts(t IdleTimeouts) ConnOption {
	return func(c *connConfig) error {
		for _, f := range []struct {
			dst *time.Duration
			v   time.Duration
		}{{&c.readIdle, t.Read}, {&c.writeIdle, t.Write}, {&c.allIdle, t.All}} {
			switch {
			case f.v == NoTimeout:
				*f.dst = 0
			case f.v < 0:
				return fmt.Errorf("engine: negative idle timeout %v (NoTimeout turns one off)", f.v)
			case f.v > 0:
				*f.dst = f.v
			}
		}
		return nil
	}
}

// keep returns v, or cur when v is zero: a zero field keeps its value.
func keep(cur, v int) int {
	if v == 0 {
		return cur
	}
	return v
}

// WithCloseTimeout bounds how long a graceful close (Close, a peer's EOF, an
// idle timeout, a loop or server shutdown) may take to send what was written
// before it; past d the connection is aborted, the unsent bytes dropped and
// OnClose told ErrCloseTimeout (default 5 s, Netty's SO_LINGER spirit).
func WithCloseTimeout(d time.Duration) ConnOption {
	return func(c *connConfig) error {
		if d <= 0 {
			return fmt.Errorf("engine: close timeout %v (expected > 0)", d)
		}
		c.closeTimeout = d
		return nil
	}
}

// WithAsyncWriteLimit bounds the bytes a connection holds for AsyncWrite:
// those queued by it and those written and not yet sent. An AsyncWrite that
// would pass n fails with ErrWriteBufferFull and accepts nothing (default
// 4 MiB). Writes on the loop (Write) are not refused; they turn the
// connection unwritable past the high watermark instead.
func WithAsyncWriteLimit(n int) ConnOption {
	return func(c *connConfig) error {
		if n <= 0 {
			return fmt.Errorf("engine: async write limit %d (expected > 0)", n)
		}
		c.asyncLimit = n
		return nil
	}
}

// WithResolver sets the resolver Dial and DialAsync use for host names
// (default net.DefaultResolver); lookups run off the loop and honour the
// dial's context.
func WithResolver(r *net.Resolver) ConnOption {
	return func(c *connConfig) error { c.resolver = r; return nil }
}

// WithKeepLimit bounds the bytes a connection keeps between deliveries
// (Keep); default DefaultKeepLimit.
func WithKeepLimit(n int) ConnOption {
	return func(c *connConfig) error {
		if n <= 0 {
			return fmt.Errorf("engine: keep limit %d (expected > 0)", n)
		}
		c.keepLimit = n
		return nil
	}
}

// systemBacklog is net.core.somaxconn, read once: the most a listen backlog
// can be. A burst of connects beyond the backlog waits out a SYN retransmit
// (a second) and, under load, can be reset, so the default takes it all.
var systemBacklog = sync.OnceValue(func() int {
	b, err := os.ReadFile("/proc/sys/net/core/somaxconn")
	if err != nil {
		return unix.SOMAXCONN
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || n <= 0 {
		return unix.SOMAXCONN
	}
	return n
})
