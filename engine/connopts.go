package engine

import (
	"cmp"
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
	workers   Loops // WithWorkers'; see refused
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
	defaultHighWatermark = 64 << 10
	defaultLowWatermark  = 32 << 10
	// defaultCloseTimeout bounds a graceful Close against a peer that does
	// not read: past it the connection is aborted (ErrCloseTimeout).
	defaultCloseTimeout = 5 * time.Second
	// defaultAsyncWriteLimit bounds the bytes a connection holds for
	// AsyncWrite (queued and not yet sent).
	defaultAsyncWriteLimit = 4 << 20
)

func newConnConfig(network string, opts []ConnOption) (*connConfig, error) {
	c := &connConfig{
		network:   network,
		backlog:   systemBacklog(),
		noDelay:   true,
		highWater: defaultHighWatermark,
		lowWater:  defaultLowWatermark,

		closeTimeout: defaultCloseTimeout,
		asyncLimit:   defaultAsyncWriteLimit,
		keepLimit:    defaultKeepLimit,
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

// WithWorkers serves each accepted connection on loops.Next() (Netty's
// child group: a loop group, or one loop); without it the accepting loop
// serves them. If loops has a method Refused(target *Loop), it is called
// when a connection Next assigned to target is closed before it opened,
// because target refused it (it was shutting down): a Loops that counts its
// choices undoes one there. It runs on the accepting loop or on target.
func WithWorkers(loops Loops) ConnOption {
	return func(c *connConfig) error {
		if loops != nil {
			c.chooser, c.workers = loops.Next, loops
		}
		return nil
	}
}

// SocketOptions are the options of the sockets Listen, Dial and Adopt make
// or take. A zero field keeps its value: the default unless an earlier
// option set it.
type SocketOptions struct {
	// Backlog is the listen backlog: how many connections the kernel
	// queues for accept. The default is the system's limit
	// (net.core.somaxconn), as with net.Listen and Netty; the kernel lowers
	// a larger one to that limit.
	Backlog int
	// ReusePort sets SO_REUSEPORT on a listening socket, so that several
	// sockets (of loops or processes) may listen on one port, and no more;
	// loopgroup.WithListenerPerLoop opens one such socket per loop.
	ReusePort bool
	// Nagle leaves TCP_NODELAY off, so that the kernel may hold small
	// writes back to coalesce them; by default TCP_NODELAY is on, as with
	// net.
	Nagle bool
	// KeepAlive turns TCP keep-alive on with this idle time and interval
	// (default off).
	KeepAlive time.Duration
	// SendBuffer and RecvBuffer set SO_SNDBUF and SO_RCVBUF in bytes. By
	// default the kernel sizes them (net.core.wmem_default and
	// rmem_default, auto-tuned for TCP); setting one turns the kernel's
	// auto-tuning off for it.
	SendBuffer, RecvBuffer int
}

// WithSocketOptions sets socket options; a zero field keeps its value.
func WithSocketOptions(o SocketOptions) ConnOption {
	return func(c *connConfig) error {
		if o.Backlog < 0 || o.KeepAlive < 0 || o.SendBuffer < 0 || o.RecvBuffer < 0 {
			return fmt.Errorf("engine: socket options %+v (expected values >= 0; 0 keeps the default)", o)
		}
		c.backlog = cmp.Or(o.Backlog, c.backlog)
		c.reusePort = c.reusePort || o.ReusePort
		c.noDelay = c.noDelay && !o.Nagle
		c.keepAlive = cmp.Or(o.KeepAlive, c.keepAlive)
		c.sndBuf = cmp.Or(o.SendBuffer, c.sndBuf)
		c.rcvBuf = cmp.Or(o.RecvBuffer, c.rcvBuf)
		return nil
	}
}

// BufferLimits bound the bytes a connection holds. A zero field keeps its
// value: the default unless an earlier option set it.
type BufferLimits struct {
	// LowWatermark and HighWatermark bound the outbound buffer (Netty's
	// WriteBufferWaterMark; defaults 32 KiB and 64 KiB): past High bytes
	// the connection turns unwritable (OnWritabilityChanged), under Low it
	// turns writable again. Writes on the loop are never refused.
	LowWatermark, HighWatermark int
	// Keep bounds the bytes a connection keeps between deliveries (Keep;
	// default 1 MiB: a 100 KB value split across reads fits, and a thousand
	// peers sending half a frame cannot take a gigabyte).
	Keep int
	// AsyncWrite bounds the bytes a connection holds for AsyncWrite: those
	// queued by it and those written and not yet sent (default 4 MiB). An
	// AsyncWrite that would pass it fails with
	// ErrWriteBufferFull and accepts nothing.
	AsyncWrite int
}

// WithBufferLimits sets the buffer limits; a zero field keeps its value.
// The watermarks must end with 0 < LowWatermark <= HighWatermark.
func WithBufferLimits(b BufferLimits) ConnOption {
	return func(c *connConfig) error {
		if b.LowWatermark < 0 || b.HighWatermark < 0 || b.Keep < 0 || b.AsyncWrite < 0 {
			return fmt.Errorf("engine: buffer limits %+v (expected >= 0; 0 keeps the default)", b)
		}
		low, high := cmp.Or(b.LowWatermark, c.lowWater), cmp.Or(b.HighWatermark, c.highWater)
		if low > high {
			return fmt.Errorf("engine: watermarks low %d > high %d (a zero field keeps the default low %d, high %d; set both)",
				low, high, defaultLowWatermark, defaultHighWatermark)
		}
		c.lowWater, c.highWater = low, high
		c.keepLimit = cmp.Or(b.Keep, c.keepLimit)
		c.asyncLimit = cmp.Or(b.AsyncWrite, c.asyncLimit)
		return nil
	}
}

// Timeouts are a connection's timers. A zero field keeps its value: the
// default unless an earlier option set it.
type Timeouts struct {
	// ReadIdle, WriteIdle and AllIdle are Netty's IdleStateHandler times,
	// each off by default: OnIdle(ReadIdle) after ReadIdle with nothing
	// received, OnIdle(WriteIdle) after WriteIdle with nothing sent,
	// OnIdle(AllIdle) after AllIdle with neither.
	ReadIdle, WriteIdle, AllIdle time.Duration
	// Close bounds how long a graceful close (Close, a peer's EOF, an idle
	// timeout, a loop or server shutdown) may take to send what was written
	// before it; past it the connection is aborted, the unsent bytes
	// dropped and OnClose told ErrCloseTimeout (default
	// 5 s, Netty's SO_LINGER spirit).
	Close time.Duration
}

// WithTimeouts sets a connection's timeouts; a zero field keeps its value.
func WithTimeouts(t Timeouts) ConnOption {
	return func(c *connConfig) error {
		if t.ReadIdle < 0 || t.WriteIdle < 0 || t.AllIdle < 0 || t.Close < 0 {
			return fmt.Errorf("engine: timeouts %+v (expected >= 0; 0 keeps the default)", t)
		}
		c.readIdle = cmp.Or(t.ReadIdle, c.readIdle)
		c.writeIdle = cmp.Or(t.WriteIdle, c.writeIdle)
		c.allIdle = cmp.Or(t.AllIdle, c.allIdle)
		c.closeTimeout = cmp.Or(t.Close, c.closeTimeout)
		return nil
	}
}

// WithResolver sets the resolver Dial and DialAsync use for host names
// (default net.DefaultResolver); lookups run off the loop and honour the
// dial's context.
func WithResolver(r *net.Resolver) ConnOption {
	return func(c *connConfig) error { c.resolver = r; return nil }
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
