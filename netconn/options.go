package netconn

import (
	"fmt"

	"github.com/ringloop/ringloop/engine"
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

// WithConnOptions passes socket and connection options (backlog, TCP_NODELAY,
// buffer sizes, keep-alive, watermarks, idle timeouts) to the engine.
func WithConnOptions(opts ...engine.ConnOption) Option {
	return func(c *config) error { c.conn = append(c.conn, opts...); return nil }
}

// WithBufferLimits bounds the bytes a connection holds between its loop and
// the goroutines using it: received bytes not yet Read (past read, the loop
// stops reading the socket) and written bytes not yet taken by the loop
// (past write, Write blocks). Defaults: 64 KiB each.
func WithBufferLimits(read, write int) Option {
	return func(c *config) error {
		if read <= 0 || write <= 0 {
			return fmt.Errorf("netconn: buffer limits read %d write %d (expected > 0)", read, write)
		}
		c.readLimit, c.writeLimit = read, write
		return nil
	}
}

// WithAcceptQueue bounds the connections a Listener holds for Accept
// (default 128); past it the listener stops accepting until Accept catches
// up, and connections wait in the kernel's backlog.
func WithAcceptQueue(n int) Option {
	return func(c *config) error {
		if n <= 0 {
			return fmt.Errorf("netconn: accept queue %d (expected > 0)", n)
		}
		c.acceptQueue = n
		return nil
	}
}
