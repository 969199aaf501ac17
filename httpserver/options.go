package httpserver

import (
	"fmt"
	"time"
)

// Option configures a Server.
type Option func(*config) error

// Defaults. MaxHeaderBytes is net/http's DefaultMaxHeaderBytes; the body
// limit exists because request bodies are buffered whole before the handler
// runs (net/http streams them and has no limit).
const (
	DefaultMaxHeaderBytes    = 1 << 20
	DefaultMaxHeaders        = 1000
	DefaultMaxRequestLine    = 64 << 10
	DefaultMaxBodyBytes      = 8 << 20
	DefaultReadHeaderTimeout = 10 * time.Second
	DefaultReadTimeout       = 60 * time.Second
	DefaultIdleTimeout       = 120 * time.Second
)

type limits struct {
	maxHeaderBytes int
	maxHeaders     int
	maxLine        int
	maxBody        int
}

type config struct {
	limits
	readHeader time.Duration
	read       time.Duration
	idle       time.Duration
	name       string
	inline     bool
}

func newConfig(opts []Option) (*config, error) {
	c := &config{
		limits: limits{
			maxHeaderBytes: DefaultMaxHeaderBytes,
			maxHeaders:     DefaultMaxHeaders,
			maxLine:        DefaultMaxRequestLine,
			maxBody:        DefaultMaxBodyBytes,
		},
		readHeader: DefaultReadHeaderTimeout,
		read:       DefaultReadTimeout,
		idle:       DefaultIdleTimeout,
	}
	for _, o := range opts {
		if err := o(c); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// WithLimits sets the request limits: bytes of request line plus headers
// (431 past it), number of header lines (431), request-line length (414),
// body bytes (413). Zero keeps a default.
func WithLimits(headerBytes, headers, requestLine, body int) Option {
	return func(c *config) error {
		if headerBytes < 0 || headers < 0 || requestLine < 0 || body < 0 {
			return fmt.Errorf("httpserver: negative limit")
		}
		if body > 1<<30 {
			return fmt.Errorf("httpserver: body limit %d over 1 GiB (bodies are buffered)", body)
		}
		set := func(dst *int, v int) {
			if v > 0 {
				*dst = v
			}
		}
		set(&c.maxHeaderBytes, headerBytes)
		set(&c.maxHeaders, headers)
		set(&c.maxLine, requestLine)
		set(&c.maxBody, body)
		return nil
	}
}

// WithTimeouts sets how long a client may take to send a request's headers
// (from its first byte), its whole request, and how long a keep-alive
// connection may wait for its next request. Zero turns a timeout off. They
// count from when the server read the first byte (or finished the last
// response), never fire before they have elapsed, and are checked on the
// loop's timer tick (a quarter of the shortest timeout, at most a second):
// they fire up to one tick late, later only when the loop itself is late.
func WithTimeouts(readHeader, read, idle time.Duration) Option {
	return func(c *config) error {
		if readHeader < 0 || read < 0 || idle < 0 {
			return fmt.Errorf("httpserver: negative timeout")
		}
		c.readHeader, c.read, c.idle = readHeader, read, idle
		return nil
	}
}

// WithServerName adds a Server header with this value to every response.
// By default there is none, as with net/http: it tells a scanner what to try.
func WithServerName(name string) Option {
	return func(c *config) error { c.name = name; return nil }
}

// WithInlineHTTP runs an http.Handler on the connection's loop instead of on
// a goroutine per request: faster, but a handler that blocks stalls every
// connection of the loop, and its Flush cannot wait for a slow client.
func WithInlineHTTP() Option {
	return func(c *config) error { c.inline = true; return nil }
}

// tick is how often a loop refreshes its Date header and checks timeouts.
func (c *config) tick() time.Duration {
	d := time.Second
	for _, t := range []time.Duration{c.readHeader, c.read, c.idle} {
		if t > 0 && t/4 < d {
			d = t / 4
		}
	}
	return max(d, 5*time.Millisecond)
}
