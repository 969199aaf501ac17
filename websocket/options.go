package websocket

import (
	"crypto/tls"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/internal/option"
)

// Option configures Upgrade, UpgradeHTTP, EngineHandler, TLSServer or
// Dial. Most apply to every one of them; the origin options are the
// servers' only, WithHeader, WithConnOptions and WithTLSConfig Dial's
// only, and WithHandshakeTimeout is for the calls that read or wait for a
// handshake themselves (Dial and the listener handlers: Upgrade's request
// head is read by httpserver, under its Timeouts.ReadHeader). A call given
// an option it does not take returns an error naming both, at once: never
// an option silently ignored.
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
	// connected, and on a listener (EngineHandler, TLSServer)
	// the wait for a connection's whole request head: as
	// httpserver.DefaultReadHeaderTimeout, which bounds it behind Upgrade
	// and UpgradeHTTP.
	DefaultHandshakeTimeout = 10 * time.Second
)

type config struct {
	maxMessage   int64
	closeTimeout time.Duration
	pingInterval time.Duration
	subprotocols []string
	origin       originPolicy
	slow         SlowConsumer
	compression  bool

	// Dial and the listener handlers.
	handshakeTimeout time.Duration

	// Dial only.
	header   http.Header
	connOpts []engine.ConnOption
	tls      *tls.Config

	// The option being applied, when it is not for every call: its name
	// and the calls that take it (newConfig checks it against the caller).
	only      string
	onlySites site
}

// site is a call that takes options, for the options that only some take.
type site uint8

const (
	siteDial     site = 1 << iota // Dial, DialAsync
	siteListener                  // EngineHandler, TLSServer
	siteUpgrade                   // Upgrade, UpgradeHTTP

	siteServers = siteListener | siteUpgrade
)

// restrict marks the option being applied as taken by sites only.
func (c *config) restrict(name string, sites site) { c.only, c.onlySites = name, sites }

// defaults is every option's default, and the configuration of a server
// given none.
var defaults = config{maxMessage: DefaultMaxMessageSize, closeTimeout: DefaultCloseTimeout, handshakeTimeout: DefaultHandshakeTimeout}

// newConfig applies opts for the call named caller at site s, refusing an
// option that call does not take.
func newConfig(opts []Option, caller string, s site) (*config, error) {
	if len(opts) == 0 && s != siteDial {
		return &defaults, nil // read only: an Upgrade without options allocates none
	}
	c := defaults
	cfg := &c
	for _, o := range opts {
		if o == nil {
			return nil, fmt.Errorf("websocket: %s: nil Option", caller)
		}
		cfg.only, cfg.onlySites = "", 0
		if err := o(cfg); err != nil {
			return nil, err
		}
		if cfg.onlySites != 0 && cfg.onlySites&s == 0 {
			return nil, fmt.Errorf("websocket: %s does not take %s: %s", caller, cfg.only, whereTaken(cfg.onlySites))
		}
	}
	cfg.only, cfg.onlySites = "", 0
	return cfg, nil
}

// whereTaken says which calls take an option restricted to sites.
func whereTaken(sites site) string {
	switch sites {
	case siteDial:
		return "it is a Dial option (a server's connections take the listener's settings)"
	case siteServers:
		return "it is a server option (Upgrade, UpgradeHTTP, EngineHandler, TLSServer)"
	case siteDial | siteListener:
		return "it is for Dial, EngineHandler and TLSServer; behind Upgrade and UpgradeHTTP the HTTP server reads the request head, bounded by its Timeouts.ReadHeader"
	}
	return "not taken here"
}

// WithMaxMessageSize bounds a message, its fragments together; a larger one
// closes the connection with 1009 (default DefaultMaxMessageSize).
func WithMaxMessageSize(n int64) Option {
	return option.Positive("websocket: max message size", n, func(c *config) { c.maxMessage = n })
}

// WithCloseTimeout bounds the wait for the peer's answer to a close frame
// this side sent; past it the connection is closed anyway (default
// DefaultCloseTimeout).
func WithCloseTimeout(d time.Duration) Option {
	return option.Positive("websocket: close timeout", d, func(c *config) { c.closeTimeout = d })
}

// WithPingInterval sends a ping every d on the loop's timers and closes a
// connection that has sent nothing (a pong or anything else) for a whole
// interval after a ping: dead peers behind NATs and proxies are found.
// Off by default.
func WithPingInterval(d time.Duration) Option {
	return option.Positive("websocket: ping interval", d, func(c *config) { c.pingInterval = d })
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

// WithHandshakeTimeout bounds a handshake (default DefaultHandshakeTimeout).
// On Dial it is the wait for the server's answer once the TCP connection
// is up (and the TLS handshake's, for wss); Dial's context bounds the whole
// of it as well. On EngineHandler and TLSServer it is the time from a
// connection's opening (over TLS: from its TLS handshake's end) to the end
// of its request head: a client that sends nothing, or trickles its
// request, is closed without an answer once it passes, as net/http's
// ReadHeaderTimeout does. TLSServer bounds the TLS handshake by it too.
// Upgrade and UpgradeHTTP refuse it: their request head was read by
// httpserver, under its Timeouts.ReadHeader.
func WithHandshakeTimeout(d time.Duration) Option {
	return option.Positive("websocket: handshake timeout", d, func(c *config) {
		c.handshakeTimeout = d
		c.restrict("WithHandshakeTimeout", siteDial|siteListener)
	})
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
		c.restrict("WithHeader", siteDial)
		return nil
	}
}

// WithConnOptions passes options to Dial's engine.Dial (socket options,
// buffer limits, timeouts...). A server's connections
// take the listener's.
func WithConnOptions(opts ...engine.ConnOption) Option {
	return func(c *config) error {
		c.connOpts = append([]engine.ConnOption(nil), opts...)
		c.restrict("WithConnOptions", siteDial)
		return nil
	}
}

// WithTLSConfig sets the TLS configuration Dial uses for a wss:// URL
// (root CAs, client certificates, session cache...; Dial works on a clone).
// ServerName defaults to the URL's host. Without it a wss:// Dial verifies
// the server against the system's roots; a ws:// URL refuses it.
func WithTLSConfig(cfg *tls.Config) Option {
	return option.Required(cfg, "websocket: WithTLSConfig: nil configuration", func(c *config) {
		c.tls = cfg
		c.restrict("WithTLSConfig", siteDial)
	})
}
