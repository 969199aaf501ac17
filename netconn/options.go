package netconn

import (
	"fmt"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/internal/option"
)

// Option configures Listen, Dial and the connections they make.
type Option func(*config) error

type config struct {
	conn        []engine.ConnOption
	readLimit   int
	writeLimit  int
	acceptQueue int
}

// Defaults.
const (
	// DefaultReadLimit is how many received bytes a connection holds for
	// Read before it stops reading from the socket.
	DefaultReadLimit = 64 << 10
	// DefaultWriteLimit is how many written bytes a connection holds for
	// its loop before Write blocks.
	DefaultWriteLimit = 64 << 10
	// DefaultAcceptQueue is how many connections a Listener holds for Accept
	// before it stops accepting (they then wait in the kernel's backlog).
	DefaultAcceptQueue = 128
)

func newConfig(opts []Option) (*config, error) {
	c := &config{readLimit: DefaultReadLimit, writeLimit: DefaultWriteLimit, acceptQueue: DefaultAcceptQueue}
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

// BufferLimits bounds the bytes a connection holds between its loop and the
// goroutines using it. A zero field keeps its current value (its default
// unless an earlier option set it).
type BufferLimits struct {
	Read  int // received bytes not yet Read; past it the loop stops reading the socket (default DefaultReadLimit)
	Write int // written bytes not yet taken by the loop; past it Write blocks (default DefaultWriteLimit)
}

// WithBufferLimits sets the buffer limits; a zero field keeps its default.
func WithBufferLimits(l BufferLimits) Option {
	return func(c *config) error {
		if l.Read < 0 || l.Write < 0 {
			return fmt.Errorf("netconn: buffer limits %+v (expected >= 0; 0 keeps the default)", l)
		}
		if l.Read > 0 {
			c.readLimit = l.Read
		}
		if l.Write > 0 {
			c.writeLimit = l.Write
		}
		return nil
	}
}

// WithAcceptQueue bounds the connections a Listener holds for Accept
// (default 128); past it the listener stops accepting until Accept catches
// up, and connections wait in the kernel's backlog.
func WithAcceptQueue(n int) Option {
	return option.Positive("netconn: accept queue", n, func(c *config) { c.acceptQueue = n })
}
