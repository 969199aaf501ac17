package websocket

import (
	"cmp"
	"crypto/tls"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/internal/option"
)

// Option configures Upgrade, UpgradeFast, EngineHandler or Dial. Most
// apply to every one of them; the origin options are the servers' only,
// WithDialConfig is Dial's only, and Timeouts.Handshake is for the calls
// that read or wait for a handshake themselves (Dial and EngineHandler:
// the upgrades' request head is read by httpserver, under its
// Timeouts.ReadHeader). A call given an option it does not take returns an
// error naming both, at once: never an option silently ignored.
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

// Defaults, each stated by its option's doc.
const (
	defaultMaxMessageSize = 16 << 20
	defaultCloseTimeout   = 5 * time.Second
	// defaultHandshakeTimeout is httpserver.DefaultReadHeaderTimeout, which
	// bounds the request head behind Upgrade and UpgradeFast, and
	// looptls.DefaultHandshakeTimeout, which bounds a TLS handshake: every
	// path cuts a stalled client alike by default.
	defaultHandshakeTimeout = 10 * time.Second
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

	// Dial only (WithDialConfig).
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
	siteListener                  // EngineHandler
	siteUpgrade                   // Upgrade, UpgradeFast

	siteServers = siteListener | siteUpgrade
)

// restrict marks the option being applied as taken by sites only.
func (c *config) restrict(name string, sites site) { c.only, c.onlySites = name, sites }

// defaults is every option's default, and the configuration of a server
// given none.
var defaults = config{maxMessage: defaultMaxMessageSize, closeTimeout: defaultCloseTimeout, handshakeTimeout: defaultHandshakeTimeout}

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
		return "it is a server option (Upgrade, UpgradeFast, EngineHandler)"
	case siteDial | siteListener:
		return "it is for Dial and EngineHandler; behind Upgrade and UpgradeFast the HTTP server reads the request head, bounded by its Timeouts.ReadHeader"
	}
	return "not taken here"
}

// WithMaxMessageSize bounds a message, its fragments together, and a
// compressed one once inflated; a larger one closes the connection with
// 1009 (default 16 MiB).
func WithMaxMessageSize(n int64) Option {
	return option.Positive("websocket: max message size", n, func(c *config) { c.maxMessage = n })
}

// Timeouts are a connection's time bounds (WithTimeouts). Handshake and
// Close always apply, so that a peer that stalls is cut; Ping is off
// unless set. Past one of them the connection is closed and the error
// matches ErrTimeout.
type Timeouts struct {
	// Handshake bounds the opening handshake (default 10 s, as
	// httpserver.DefaultReadHeaderTimeout). On Dial it is the wait for the
	// server's answer once the TCP connection is up (and the TLS
	// handshake's, for wss://); Dial's context bounds the whole of it as
	// well. On EngineHandler it is the time from a connection's opening
	// (under looptls.Server: from its TLS handshake's end) to the end of
	// its request head: a client that sends nothing, or trickles its
	// request, is closed without an answer, as net/http's
	// ReadHeaderTimeout does. Upgrade and UpgradeFast refuse it: their
	// request head was read by httpserver, under its Timeouts.ReadHeader.
	Handshake time.Duration
	// Close bounds the wait for the peer's answer to a close frame this
	// side sent; past it the connection is closed anyway (default 5 s).
	Close time.Duration
	// Ping, when set, sends a ping every Ping on the loop's timers and
	// closes a connection that has sent nothing (a pong or anything else)
	// for a whole interval after a ping: dead peers behind NATs and
	// proxies are found. Off by default.
	Ping time.Duration
}

// WithTimeouts sets the timeouts; a zero field keeps its value (the
// default unless an earlier WithTimeouts set it), a negative one is an
// error. Handshake and Close cannot be turned off; Ping is off while zero.
func WithTimeouts(t Timeouts) Option {
	return func(c *config) error {
		if t.Handshake < 0 || t.Close < 0 || t.Ping < 0 {
			return fmt.Errorf("websocket: timeouts %+v (expected >= 0; 0 keeps the default)", t)
		}
		c.handshakeTimeout = cmp.Or(t.Handshake, c.handshakeTimeout)
		c.closeTimeout = cmp.Or(t.Close, c.closeTimeout)
		c.pingInterval = cmp.Or(t.Ping, c.pingInterval)
		if t.Handshake != 0 {
			c.restrict("Timeouts.Handshake", siteDial|siteListener)
		}
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

// DialConfig is what only a client has (WithDialConfig).
type DialConfig struct {
	// Header's fields are added to the opening handshake (Origin,
	// Authorization, Cookie...); a Host field replaces the one taken from
	// the URL. The fields the handshake itself sets (Upgrade, Connection,
	// Sec-WebSocket-*) are refused: subprotocols and compression have
	// options of their own.
	Header http.Header
	// TLSConfig is the TLS configuration of a wss:// URL (root CAs, client
	// certificates, session cache...; Dial works on a clone), its
	// ServerName the URL's host unless set. Without it a wss:// Dial
	// verifies the server against the system's roots; a ws:// URL refuses
	// it.
	TLSConfig *tls.Config
	// ConnOptions are the engine.ConnOptions of the connection Dial opens
	// (engine.Dial's: socket options, buffer limits, engine timeouts,
	// resolver). A server's connections take their listener's.
	ConnOptions []engine.ConnOption
}

// WithDialConfig sets Dial's client-only settings; a zero field keeps its
// value. A Dial option: a server refuses it.
func WithDialConfig(d DialConfig) Option {
	return func(c *config) error {
		for k, vs := range d.Header {
			switch http.CanonicalHeaderKey(k) {
			case "Upgrade", "Connection", "Sec-Websocket-Key", "Sec-Websocket-Version",
				"Sec-Websocket-Extensions", "Sec-Websocket-Protocol", "Content-Length", "Transfer-Encoding":
				return fmt.Errorf("websocket: DialConfig.Header: %s is set by the handshake", k)
			}
			for _, v := range vs {
				if strings.ContainsAny(k+v, "\r\n") {
					return fmt.Errorf("websocket: DialConfig.Header: %s has a line break", k)
				}
			}
		}
		if d.Header != nil {
			c.header = d.Header.Clone()
		}
		if d.TLSConfig != nil {
			c.tls = d.TLSConfig
		}
		if d.ConnOptions != nil {
			c.connOpts = append([]engine.ConnOption(nil), d.ConnOptions...)
		}
		c.restrict("WithDialConfig", siteDial)
		return nil
	}
}
