package netconn

import (
	"cmp"
	"fmt"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/packet"
)

// Option configures Listen, Dial and the connections they make.
type Option func(*config) error

type config struct {
	conn        []engine.ConnOption
	packet      *packet.Options // ListenPacket's socket
	readLimit   int
	writeLimit  int
	acceptQueue int
}

// The limits' defaults (Limits states them).
const (
	defaultReadLimit   = 64 << 10
	defaultWriteLimit  = 64 << 10
	defaultAcceptQueue = 128
)

func newConfig(opts []Option) (*config, error) {
	c := &config{readLimit: defaultReadLimit, writeLimit: defaultWriteLimit, acceptQueue: defaultAcceptQueue}
	for _, o := range opts {
		if err := o(c); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// WithConnOptions passes engine.ConnOption values (backlog, TCP_NODELAY,
// socket buffers, keep-alive, watermarks, idle timeouts) to the listening
// socket and the connections; loopgroup.WithConnOptions is the same option
// for loopgroup.Serve.
func WithConnOptions(opts ...engine.ConnOption) Option {
	return func(c *config) error { c.conn = append(c.conn, opts...); return nil }
}

// WithPacketOptions sets the options of ListenPacket's socket (MaxSize,
// socket buffers, the async write limit...; see packet.Options); stream
// sockets ignore it.
func WithPacketOptions(o packet.Options) Option {
	return func(c *config) error { c.packet = &o; return nil }
}

// Limits bounds what a connection or listener holds between its loop and
// the goroutines using it, so a slow reader or acceptor holds the kernel
// back instead of growing a queue. A zero field keeps its current value
// (its default unless an earlier option set it).
type Limits struct {
	// Read is the received bytes a connection holds for Read (default
	// 64 KiB); past it the loop stops reading the socket. On a PacketConn
	// it counts the datagrams' bytes held for ReadFrom.
	Read int
	// Write is the written bytes a connection holds for its loop (default
	// 64 KiB); past it Write blocks.
	Write int
	// AcceptQueue is the connections a Listener holds for Accept (default
	// 128); past it the listener stops accepting until Accept catches up,
	// and connections wait in the kernel's backlog.
	AcceptQueue int
}

// WithLimits sets the limits; a zero field keeps its value.
func WithLimits(l Limits) Option {
	return func(c *config) error {
		if l.Read < 0 || l.Write < 0 || l.AcceptQueue < 0 {
			return fmt.Errorf("netconn: limits %+v (expected >= 0; 0 keeps the value)", l)
		}
		c.readLimit = cmp.Or(l.Read, c.readLimit)
		c.writeLimit = cmp.Or(l.Write, c.writeLimit)
		c.acceptQueue = cmp.Or(l.AcceptQueue, c.acceptQueue)
		return nil
	}
}
