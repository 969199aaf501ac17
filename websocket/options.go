package websocket

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/ringloop/ringloop/engine"
)

// Option configures Upgrade, EngineHandler or Dial. Most apply to both
// sides; WithOriginCheck is the server's only, WithHandshakeTimeout,
// WithHeader and WithConnOptions the client's only, and the other side
// refuses them rather than ignore them.
type Option func(*config) error

// SlowConsumer is what a connection does when the bytes it has not sent yet
// pass the engine's high watermark (a peer that does not read).
type SlowConsumer uint8

const (
	// PauseReading (the default) stops reading the peer until its output
	// falls under the low watermark: a peer that sends but does not read
	// cannot make the server buffer answers without bound. Messages the
	// server pushes on its own are still accepted; a producer checks
	// Conn.Writable or uses AsyncWriteMessage, which refuses past the
	// engine's async write limit.
	PauseReading SlowConsumer = iota
	// CloseSlow drops the connection, its unsent bytes with it (a close
	// frame would wait behind them), and OnClose reports
	// ClosePolicyViolation and ErrSlowConsumer: for fan-out, where one peer
	// that does not keep up must not hold memory.
	CloseSlow
)

// Defaults.
const (
	DefaultMaxMessageSize = 16 << 20
	DefaultCloseTimeout   = 5 * time.Second
	// DefaultHandshakeTimeout bounds Dial's wait for the 101 answer once
	// connected.
	DefaultHandshakeTimeout = 10 * time.Second
)

type config struct {
	maxMessage   int64
	closeTimeout time.Duration
	pingInterval time.Duration
	subprotocols []string
	checkOrigin  func(origin, host []byte) bool
	slow         SlowConsumer
	compression  bool

	// Dial only.
	handshakeTimeout time.Duration
	header           http.Header
	connOpts         []engine.ConnOption
	tls              *tls.Config

	// The first option of one side only that was given, to refuse it on
	// the other.
	serverOnly, clientOnly string
}

// defaults is every option's default, and the configuration of a server
// given none.
var defaults = config{maxMessage: DefaultMaxMessageSize, closeTimeout: DefaultCloseTimeout, handshakeTimeout: DefaultHandshakeTimeout}

func newConfig(opts []Option, client bool) (*config, error) {
	if len(opts) == 0 && !client {
		return &defaults, nil // read only: an Upgrade without options allocates none
	}
	c := defaults
	cfg := &c
	for _, o := range opts {
		if err := o(cfg); err != nil {
			return nil, err
		}
	}
	switch {
	case client && cfg.serverOnly != "":
		return nil, fmt.Errorf("websocket: %s is a server option; Dial does not take it", cfg.serverOnly)
	case !client && cfg.clientOnly != "":
		return nil, fmt.Errorf("websocket: %s is a Dial option; a server does not take it", cfg.clientOnly)
	}
	return cfg, nil
}

// WithMaxMessageSize bounds a message, its fragments together; a larger one
// closes the connection with 1009 (default DefaultMaxMessageSize).
func WithMaxMessageSize(n int64) Option {
	return func(c *config) error {
		if n <= 0 {
			return fmt.Errorf("websocket: max message size %d (expected > 0)", n)
		}
		c.maxMessage = n
		return nil
	}
}

// WithCloseTimeout bounds the wait for the peer's answer to a close frame
// this side sent; past it the connection is closed anyway (default
// DefaultCloseTimeout).
func WithCloseTimeout(d time.Duration) Option {
	return func(c *config) error {
		if d <= 0 {
			return fmt.Errorf("websocket: close timeout %v (expected > 0)", d)
		}
		c.closeTimeout = d
		return nil
	}
}

// WithPingInterval sends a ping every d on the loop's timers and closes a
// connection that has sent nothing (a pong or anything else) for a whole
// interval after a ping: dead peers behind NATs and proxies are found.
// Off by default.
func WithPingInterval(d time.Duration) Option {
	return func(c *config) error {
		if d <= 0 {
			return fmt.Errorf("websocket: ping interval %v (expected > 0)", d)
		}
		c.pingInterval = d
		return nil
	}
}

// WithSubprotocols lists the subprotocols the server speaks, preferred
// first: the first one the client also offers is selected (Conn.Subprotocol).
// A client that offers none of them is served with none. On Dial they are
// the subprotocols offered, in order; the server may choose one of them or
// none, and an answer naming another fails the handshake.
func WithSubprotocols(names ...string) Option {
	return func(c *config) error {
		c.subprotocols = append([]string(nil), names...)
		return nil
	}
}

// WithOriginCheck refuses, with 403, a handshake for which check returns
// false; it gets the Origin header (nil if none; browsers send it) and the
// Host header. A server that relies on cookies must check the origin. By
// default every origin is accepted.
func WithOriginCheck(check func(origin, host []byte) bool) Option {
	return func(c *config) error {
		c.checkOrigin = check
		c.serverOnly = "WithOriginCheck"
		return nil
	}
}

// WithSlowConsumer sets the policy for a peer that does not read (default
// PauseReading).
func WithSlowConsumer(p SlowConsumer) Option {
	return func(c *config) error {
		if p > CloseSlow {
			return fmt.Errorf("websocket: slow consumer policy %d", p)
		}
		c.slow = p
		return nil
	}
}

// WithCompression accepts a client's offer of permessage-deflate (RFC
// 7692): messages of 64 bytes or more are sent compressed, compressed
// messages are inflated up to WithMaxMessageSize (1009 past it, so a
// compression bomb costs no more than the limit). The server asks for no
// context takeover in both directions, so a connection holds no
// compression state between messages (the package doc says why). Off by
// default: deflating costs CPU on every message, which small messages on
// fast links rarely win back, and browsers offer it always, so a default
// of on would decide that for every endpoint.
func WithCompression(on bool) Option {
	return func(c *config) error { c.compression = on; return nil }
}

// WithHandshakeTimeout bounds, on Dial, the wait for the server's answer
// once the TCP connection is up (default DefaultHandshakeTimeout); Dial's
// context bounds the whole of it as well.
func WithHandshakeTimeout(d time.Duration) Option {
	return func(c *config) error {
		if d <= 0 {
			return fmt.Errorf("websocket: handshake timeout %v (expected > 0)", d)
		}
		c.handshakeTimeout = d
		c.clientOnly = "WithHandshakeTimeout"
		return nil
	}
}

// WithHeader adds h's fields to Dial's request (Origin, Authorization,
// Cookie...); a Host field replaces the one taken from the URL. The fields
// the handshake itself sets (Upgrade, Connection, Sec-WebSocket-*) are
// refused: subprotocols and compression have options of their own.
func WithHeader(h http.Header) Option {
	return func(c *config) error {
		for k, vs := range h {
			switch http.CanonicalHeaderKey(k) {
			case "Upgrade", "Connection", "Sec-Websocket-Key", "Sec-Websocket-Version",
				"Sec-Websocket-Extensions", "Sec-Websocket-Protocol", "Content-Length", "Transfer-Encoding":
				return fmt.Errorf("websocket: WithHeader: %s is set by the handshake", k)
			}
			for _, v := range vs {
				if strings.ContainsAny(k+v, "\r\n") {
					return fmt.Errorf("websocket: WithHeader: %s has a line break", k)
				}
			}
		}
		c.header = h.Clone()
		c.clientOnly = "WithHeader"
		return nil
	}
}

// WithConnOptions passes options to Dial's engine.Dial (engine.WithNoDelay,
// socket buffers, watermarks, the keep limit...). A server's connections
// take the listener's.
func WithConnOptions(opts ...engine.ConnOption) Option {
	return func(c *config) error {
		c.connOpts = append([]engine.ConnOption(nil), opts...)
		c.clientOnly = "WithConnOptions"
		return nil
	}
}

// WithTLSConfig sets the TLS configuration Dial uses for a wss:// URL
// (root CAs, client certificates, session cache...; Dial works on a clone).
// ServerName defaults to the URL's host. Without it a wss:// Dial verifies
// the server against the system's roots; a ws:// URL refuses it.
func WithTLSConfig(cfg *tls.Config) Option {
	return func(c *config) error {
		if cfg == nil {
			return errors.New("websocket: WithTLSConfig: nil configuration")
		}
		c.tls = cfg
		c.clientOnly = "WithTLSConfig"
		return nil
	}
}
