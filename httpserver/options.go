package httpserver

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"time"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/internal/option"
)

// Option configures a Server.
type Option func(*config) error

// Defaults. The header bytes' is net/http's own, http.DefaultMaxHeaderBytes;
// the body limit exists because a body served whole is buffered before the
// handler runs (net/http streams them all and has no limit).
const (
	DefaultMaxHeaders        = 1000
	DefaultMaxRequestLine    = 64 << 10
	DefaultMaxBodyBytes      = 8 << 20
	DefaultReadHeaderTimeout = 10 * time.Second
	DefaultReadTimeout       = 60 * time.Second
	DefaultIdleTimeout       = 120 * time.Second
	DefaultWriteStallTimeout = 60 * time.Second
)

type limits struct {
	maxHeaderBytes int
	maxHeaders     int
	maxLine        int
	maxBody        int
	maxStreamBody  int64
	maxStreams     int // HTTP/2: concurrent streams per connection
}

type config struct {
	limits
	readHeader time.Duration
	read       time.Duration
	idle       time.Duration
	write      time.Duration // Timeouts.Write; 0: none
	stall      time.Duration // Timeouts.WriteStall; 0: none
	inline     bool
	logger     *slog.Logger
	connState  func(*engine.Conn, http.ConnState)
	baseCtx    context.Context
	connCtx    func(context.Context, *engine.Conn) context.Context
	tls        *tls.Config // ListenTLS's (WithTLSConfig)
	h2c        bool        // HTTP/2 with prior knowledge beside HTTP/1.1 on Listen (WithH2C)
}

func newConfig(opts []Option) (*config, error) {
	c := &config{
		limits: limits{
			maxHeaderBytes: http.DefaultMaxHeaderBytes,
			maxHeaders:     DefaultMaxHeaders,
			maxLine:        DefaultMaxRequestLine,
			maxBody:        DefaultMaxBodyBytes,
			maxStreamBody:  math.MaxInt64,
			maxStreams:     h2DefaultStreams,
		},
		readHeader: DefaultReadHeaderTimeout,
		read:       DefaultReadTimeout,
		idle:       DefaultIdleTimeout,
		stall:      DefaultWriteStallTimeout,
		baseCtx:    context.Background(),
	}
	for _, o := range opts {
		if err := o(c); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// Limits bounds what one request may hold. A zero field keeps its default.
type Limits struct {
	HeaderBytes int // request line and headers (default http.DefaultMaxHeaderBytes, 1 MiB): 431 past it
	Headers     int // header lines (default DefaultMaxHeaders): 431 past it
	RequestLine int // request-line length (default DefaultMaxRequestLine): 414 past it
	Body        int // a body held whole in memory, at most 1 GiB (default DefaultMaxBodyBytes): 413 past it

	// StreamedBody bounds a streamed body (the adapter's Request.Body on a
	// goroutine, a BodyStreamer's): a Content-Length over it gets 413, a
	// chunked body growing past it ends in *http.MaxBytesError from Read.
	// Default: none, as net/http (a streamed body's memory is one window
	// whatever its length).
	StreamedBody int64

	// Streams bounds an HTTP/2 connection's concurrent streams
	// (SETTINGS_MAX_CONCURRENT_STREAMS; default 250, as net/http). A
	// stream the client reset while its handler still runs counts until
	// the handler returns, so resetting streams cannot start more
	// handlers at once (CVE-2023-44487).
	Streams int
}

// WithLimits sets the request limits; a zero field keeps its default.
func WithLimits(l Limits) Option {
	return func(c *config) error {
		if l.HeaderBytes < 0 || l.Headers < 0 || l.RequestLine < 0 || l.Body < 0 || l.StreamedBody < 0 || l.Streams < 0 {
			return fmt.Errorf("httpserver: negative limit in %+v", l)
		}
		if l.Body > 1<<30 {
			return fmt.Errorf("httpserver: body limit %d over 1 GiB (bodies are buffered)", l.Body)
		}
		set := func(dst *int, v int) {
			if v > 0 {
				*dst = v
			}
		}
		set(&c.maxHeaderBytes, l.HeaderBytes)
		set(&c.maxHeaders, l.Headers)
		set(&c.maxLine, l.RequestLine)
		set(&c.maxBody, l.Body)
		set(&c.maxStreams, l.Streams)
		if l.StreamedBody > 0 {
			c.maxStreamBody = l.StreamedBody
		}
		return nil
	}
}

// NoTimeout in a field of Timeouts turns that timeout off.
const NoTimeout time.Duration = -1

// Timeouts bounds how long a client may take. A zero field keeps its
// default; NoTimeout turns that timeout off.
//
// Write is net/http's WriteTimeout: from the end of a request's headers
// to the end of its response's write, the response's last byte handed to
// the kernel. Past it the connection is reset and the response is lost:
// an adapter handler still running has its context cancelled and its
// Write and Flush fail, both with an error that wraps
// os.ErrDeadlineExceeded (a fast-API Deferred's Flush and Finish too).
// Unlike net/http, which notices at the handler's next write, the server
// acts at the deadline, so a handler blocked in Flush on a client that
// stopped reading is freed, and one not writing learns it from its
// context. Its default is none, as net/http's: a total bound cuts long
// downloads and event streams that a service ported from net/http expects
// to run, so it is the service's to choose. In the adapter,
// http.ResponseController's SetWriteDeadline replaces it for one request.
//
// WriteStall is what bounds, by default, a client that stops reading: a
// connection whose output stays over its high watermark
// (engine.BufferLimits) for that long, the client having read less
// than the watermarks' difference (32 KiB by default) in the meantime, is
// reset as on a write timeout. A client reading however slowly keeps its
// connection; one reading nothing cannot hold a handler (or a connection
// with pipelined requests) for longer than WriteStall. It is the
// counterpart of Read's bound on a streamed upload's silent client, and
// applies whatever the write deadline.
type Timeouts struct {
	ReadHeader time.Duration // from a request's first byte to the end of its headers (default DefaultReadHeaderTimeout)
	Read       time.Duration // from a request's first byte to the end of its body (default DefaultReadTimeout)
	Write      time.Duration // from the end of a request's headers to the end of its response's write (default none, as net/http)
	Idle       time.Duration // a keep-alive connection waiting for its next request (default DefaultIdleTimeout)
	WriteStall time.Duration // a client reading none of its output, over the high watermark (default DefaultWriteStallTimeout)
}

// WithTimeouts sets the timeouts; a zero field keeps its default, NoTimeout
// turns one off. They count from when the server read the first byte (or
// finished the last response; Write from the end of the headers,
// WriteStall from when the output passed the high watermark), never fire
// before they have elapsed, and are checked on the loop's timer tick (a
// quarter of the shortest timeout, at most half a second): they fire up to one
// tick late, later only when the loop itself is late. So do the adapter's
// per-request deadlines (http.ResponseController's SetReadDeadline and
// SetWriteDeadline).
func WithTimeouts(t Timeouts) Option {
	return func(c *config) error {
		set := func(dst *time.Duration, v time.Duration) error {
			switch {
			case v == NoTimeout:
				*dst = 0
			case v < 0:
				return fmt.Errorf("httpserver: negative timeout %v (NoTimeout turns one off)", v)
			case v > 0:
				*dst = v
			}
			return nil
		}
		for _, f := range []struct {
			dst *time.Duration
			v   time.Duration
		}{{&c.readHeader, t.ReadHeader}, {&c.read, t.Read}, {&c.write, t.Write}, {&c.idle, t.Idle}, {&c.stall, t.WriteStall}} {
			if err := set(f.dst, f.v); err != nil {
				return err
			}
		}
		return nil
	}
}

// WithInlineHTTP runs an http.Handler on the connection's loop instead of on
// a goroutine per request: faster, but a handler that blocks stalls every
// connection of the loop, and its Flush cannot wait for a slow client.
func WithInlineHTTP() Option {
	return func(c *config) error { c.inline = true; return nil }
}

// WithLogger sets where the server reports what it cannot return to a
// caller, such as a handler's panic (net/http's ErrorLog; slog.Default() by
// default, as engine.WithLogger; slog.NewLogLogger bridges to a log.Logger).
func WithLogger(l *slog.Logger) Option {
	return option.Required(l, "httpserver: nil logger", func(c *config) { c.logger = l })
}

// WithConnState sets a hook called as each connection changes state, with
// net/http's states and meanings: StateNew once accepted, StateActive when
// the first byte of a request arrives, StateIdle when it waits for the next
// request after a response, StateHijacked when Hijack or Upgrade takes it
// (its last call), StateClosed when closed. It runs on the connection's
// loop: it must not block.
func WithConnState(fn func(*engine.Conn, http.ConnState)) Option {
	return func(c *config) error { c.connState = fn; return nil }
}

// WithBaseContext sets the parent of every request's context (New):
// cancelling it cancels the requests in flight. It is net/http's
// BaseContext given as the context itself, since a Server here serves no
// net.Listener to derive it from.
func WithBaseContext(ctx context.Context) Option {
	return func(c *config) error {
		if ctx == nil {
			return errors.New("httpserver: nil base context")
		}
		c.baseCtx = ctx
		return nil
	}
}

// WithConnContext sets a hook that derives a connection's context, the
// parent of its requests' contexts (New), from the base context, as
// net/http's ConnContext; it runs on the loop before the connection's first
// request reaches the handler.
func WithConnContext(fn func(ctx context.Context, c *engine.Conn) context.Context) Option {
	return func(c *config) error { c.connCtx = fn; return nil }
}

// WithTLSConfig sets the TLS configuration ListenTLS serves with, as
// net/http's Server.TLSConfig: certificates, GetCertificate (SNI), client
// certificates, session tickets, cipher suites, versions. ListenTLS works
// on a clone, so cfg may serve other servers too. Listen ignores it (it
// serves plain HTTP, as net/http's ListenAndServe does).
func WithTLSConfig(cfg *tls.Config) Option {
	return option.Required(cfg, "httpserver: nil TLS config", func(c *config) { c.tls = cfg })
}

// WithH2C serves cleartext HTTP/2 with prior knowledge (RFC 9113 section
// 3.3) on Listen's port beside HTTP/1.1: a connection whose first bytes
// are HTTP/2's client preface ("PRI * HTTP/2.0...") speaks HTTP/2, any
// other HTTP/1.1. It is off by default, as net/http's (which asks for
// Protocols.SetUnencryptedHTTP2): cleartext HTTP/2 is for clients that
// know the server speaks it, such as gRPC inside a network or a proxy in
// front that ended TLS, and a server that did not plan for it should not
// answer it. The "Upgrade: h2c" of RFC 7540, which RFC 9113 deprecates, is
// not offered: such a request is served as HTTP/1.1. ListenTLS ignores
// the option.
func WithH2C() Option {
	return func(c *config) error { c.h2c = true; return nil }
}

// maxTick caps the tick: timeouts and deadlines fire up to one tick late, and
// half a second keeps a 10 s header timeout's cut (a slowloris) within 10.5 s
// for two timer runs a second per loop.
const maxTick = 500 * time.Millisecond

// tick is how often a loop refreshes its Date header and checks timeouts.
func (c *config) tick() time.Duration {
	d := maxTick
	for _, t := range []time.Duration{c.readHeader, c.read, c.write, c.idle, c.stall} {
		if t > 0 && t/4 < d {
			d = t / 4
		}
	}
	return max(d, 5*time.Millisecond)
}
