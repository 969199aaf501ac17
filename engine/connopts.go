package engine

import (
	"fmt"
	"net"
	"time"
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
	DefaultBacklog       = 1024
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
		backlog:   DefaultBacklog,
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

// WithBacklog sets the listen backlog (default 1024).
func WithBacklog(n int) ConnOption {
	return func(c *connConfig) error {
		if n <= 0 {
			return fmt.Errorf("engine: backlog %d (expected > 0)", n)
		}
		c.backlog = n
		return nil
	}
}

// WithReusePort sets SO_REUSEPORT on the listening socket, so several loops
// can each own a listener on one port.
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

// WithBufferSizes sets SO_SNDBUF and SO_RCVBUF (0 keeps the kernel's).
func WithBufferSizes(send, recv int) ConnOption {
	return func(c *connConfig) error {
		if send < 0 || recv < 0 {
			return fmt.Errorf("engine: buffer sizes %d/%d (expected >= 0)", send, recv)
		}
		c.sndBuf, c.rcvBuf = send, recv
		return nil
	}
}

// WithWatermarks sets the outbound buffer's write watermarks (defaults 32 KiB
// and 64 KiB): above high the connection turns unwritable, under low it turns
// writable again.
func WithWatermarks(low, high int) ConnOption {
	return func(c *connConfig) error {
		if low < 0 || high < low {
			return fmt.Errorf("engine: watermarks low %d high %d (expected 0 <= low <= high)", low, high)
		}
		c.lowWater, c.highWater = low, high
		return nil
	}
}

// WithIdleTimeouts sets Netty's reader-idle, writer-idle and all-idle
// timeouts (0: off).
func WithIdleTimeouts(read, write, all time.Duration) ConnOption {
	return func(c *connConfig) error {
		if read < 0 || write < 0 || all < 0 {
			return fmt.Errorf("engine: negative idle timeout")
		}
		c.readIdle, c.writeIdle, c.allIdle = read, write, all
		return nil
	}
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
