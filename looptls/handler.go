package looptls

import (
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/internal/workers"
)

// Handler receives a TLS connection's events, as engine.Handler does a
// TCP connection's: every callback of a connection runs on its loop, one at
// a time.
type Handler interface {
	// OnOpen is called once the handshake has completed:
	// c.ConnectionState tells the protocol, server name and peer
	// certificates.
	OnOpen(c *Conn)
	// OnData is called with decrypted bytes, after those an earlier call
	// kept with c.Keep; b is valid only during the call.
	OnData(c *Conn, b []byte)
	// OnClose is called once, after the connection is closed, with why:
	// io.EOF (the peer sent close_notify, or closed at a record boundary),
	// io.ErrUnexpectedEOF (the peer closed inside a record, or while the
	// handler kept an unfinished frame, which c.Kept still returns),
	// an error wrapping the TLS alert or record error that ended it, or
	// any reason engine.Handler.OnClose gives.
	OnClose(c *Conn, err error)
}

// HandshakeErrorHandler is an optional Handler extension: it learns of a
// connection whose handshake did not complete (a timeout, a peer that
// closed or sent an alert, a certificate refused), which never reaches
// OnOpen. err wraps ErrHandshake.
type HandshakeErrorHandler interface {
	OnHandshakeError(c *engine.Conn, err error)
}

// PlaintextHandler is an optional Handler extension for a server whose
// clients may speak the plain protocol to its TLS port by mistake: when
// the first bytes a peer sends are not a TLS record, OnPlaintext gets
// them (the five of a record header) on the loop before the connection
// closes, and may write a last plaintext answer on c, which is sent before
// the close (httpserver answers an HTTP request with a 400, as net/http
// does). The handshake error follows (HandshakeErrorHandler).
type PlaintextHandler interface {
	OnPlaintext(c *engine.Conn, head []byte)
}

// HalfCloseHandler is an optional Handler extension (engine's
// HalfCloseHandler for TLS): when the peer has finished sending — its
// close_notify, or its TCP FIN at a record boundary — OnReadClosed is
// called, after every byte it sent was delivered, instead of closing the
// connection, which stays open for writing until Close or CloseWrite. A
// protocol that answers what arrived before the peer's end (pipelined HTTP
// requests) needs it. Without it, the peer's end closes the connection.
type HalfCloseHandler interface {
	OnReadClosed(c *Conn)
}

// WritabilityHandler is an optional Handler extension: the engine
// connection's watermarks, which count ciphertext waiting for the socket,
// crossed (see engine.WritabilityHandler).
type WritabilityHandler interface {
	OnWritabilityChanged(c *Conn, writable bool)
}

// ShutdownHandler is an optional Handler extension: the connection's loop
// is shutting down (engine.ShutdownHandler). OnShutdown may write a last
// message; then close_notify is sent and the connection closes once it is
// flushed, OnClose getting engine.ErrShutdown.
type ShutdownHandler interface {
	OnShutdown(c *Conn)
}

// Errors.
var (
	// ErrHandshake is wrapped by every handshake failure.
	ErrHandshake = errors.New("looptls: handshake failed")
	// ErrHandshakeTimeout: the handshake did not complete within the
	// handshake timeout (WithHandshakeTimeout).
	ErrHandshakeTimeout = fmt.Errorf("looptls: handshake timed out: %w", os.ErrDeadlineExceeded)
)

// Defaults.
const (
	// DefaultHandshakeTimeout bounds a handshake (a peer that stalls).
	DefaultHandshakeTimeout = 10 * time.Second
	// DefaultMaxHandshakeBytes bounds the ciphertext a connection buffers
	// during its handshake: past it reading pauses until the handshake
	// has consumed them. Enough for a client's certificate chain and its
	// first records.
	DefaultMaxHandshakeBytes = 64 << 10
)

// Option configures Server and Client.
type Option func(*options)

type options struct {
	handshakeTimeout time.Duration
	maxHandshake     int
	keepLimit        int
	asyncLimit       int
}

// WithHandshakeTimeout bounds the handshake (default
// DefaultHandshakeTimeout); past it the connection is closed and
// OnHandshakeError told ErrHandshakeTimeout.
func WithHandshakeTimeout(d time.Duration) Option {
	return func(o *options) {
		if d > 0 {
			o.handshakeTimeout = d
		}
	}
}

// WithMaxHandshakeBytes bounds the ciphertext buffered during the handshake
// (default DefaultMaxHandshakeBytes).
func WithMaxHandshakeBytes(n int) Option {
	return func(o *options) {
		if n > 0 {
			o.maxHandshake = n
		}
	}
}

// WithKeepLimit bounds the plaintext Conn.Keep holds (default
// engine.DefaultKeepLimit).
func WithKeepLimit(n int) Option {
	return func(o *options) {
		if n > 0 {
			o.keepLimit = n
		}
	}
}

// WithAsyncWriteLimit bounds the plaintext AsyncWrite holds plus the
// ciphertext waiting to be sent (default engine.DefaultAsyncWriteLimit).
func WithAsyncWriteLimit(n int) Option {
	return func(o *options) {
		if n > 0 {
			o.asyncLimit = n
		}
	}
}

// Server returns the engine.Handler that serves TLS with cfg on the
// connections of a listener and hands their plaintext to h:
//
//	engine.Listen(loop, "tcp", addr, looptls.Server(h, cfg))
//
// cfg must not be changed afterwards (crypto/tls's rule).
func Server(h Handler, cfg *tls.Config, opts ...Option) engine.Handler {
	return newWrapper(h, cfg, false, opts)
}

// Client returns the engine.Handler that runs the client side of TLS with
// cfg on a connection engine.Dial makes and hands its plaintext to h. Set
// cfg.ServerName (or InsecureSkipVerify): the engine connection knows only
// the peer's address.
func Client(h Handler, cfg *tls.Config, opts ...Option) engine.Handler {
	return newWrapper(h, cfg, true, opts)
}

func newWrapper(h Handler, cfg *tls.Config, client bool, opts []Option) *wrapper {
	w := &wrapper{hs: *newHandlers(h), cfg: cfg, client: client, o: options{
		handshakeTimeout: DefaultHandshakeTimeout,
		maxHandshake:     DefaultMaxHandshakeBytes,
		keepLimit:        engine.DefaultKeepLimit,
		asyncLimit:       engine.DefaultAsyncWriteLimit,
	}}
	w.hh, _ = h.(HandshakeErrorHandler)
	for _, o := range opts {
		o(&w.o)
	}
	return w
}

// handlers is a Handler with the optional interfaces it implements.
type handlers struct {
	h  Handler
	wh WritabilityHandler
	sh ShutdownHandler
	rh HalfCloseHandler
}

func newHandlers(h Handler) *handlers {
	hs := &handlers{h: h}
	hs.wh, _ = h.(WritabilityHandler)
	hs.sh, _ = h.(ShutdownHandler)
	hs.rh, _ = h.(HalfCloseHandler)
	return hs
}

// wrapper is the engine.Handler of the TLS connections: it keeps each
// connection's *Conn as the engine connection's value.
type wrapper struct {
	hs     handlers // every connection's, until its SetHandler
	hh     HandshakeErrorHandler
	cfg    *tls.Config
	client bool
	o      options
}

func (w *wrapper) OnOpen(ec *engine.Conn) {
	c := newConn(w, ec)
	ec.SetValue(c)
	workers.For(ec.Loop()).Go(handshakeJob{c})
}

// handshakeJob runs a connection's handshake on one of its loop's workers,
// a goroutine whose stack crypto/tls has grown already (package
// internal/workers: 2.7% of a handshake's CPU went to growing a new one).
type handshakeJob struct{ c *Conn }

func (j handshakeJob) Run() { j.c.handshake() }

func (w *wrapper) OnData(ec *engine.Conn, b []byte) {
	c := ec.Value().(*Conn)
	switch c.st {
	case stHandshake:
		c.tr.feed(b)
	case stOpen:
		c.tr.deliver(b)
		c.readRecords()
		c.tr.stash()
	}
}

func (w *wrapper) OnClose(ec *engine.Conn, err error) {
	c := ec.Value().(*Conn)
	st := c.st
	c.st, c.closeErr = stClosed, err
	c.async.close(ErrConnClosed)
	switch {
	case st == stHandshake:
		// The handshake reads what the peer sent before it went (an
		// alert, most often) and then err; hsDone reports its outcome.
		c.tr.closeWith(err)
	case !c.opened: // hsDone ran: its error says more than the close's
		c.w.handshakeFailed(c)
	default:
		if err == io.EOF && !c.paused {
			err = c.truncated()
		}
		if err == io.EOF && len(c.in) > 0 {
			err = io.ErrUnexpectedEOF // the handler kept an unfinished frame (Kept has it)
		}
		c.hs.h.OnClose(c, err)
		c.in = nil
	}
}

// handshakeFailed tells the handler of a handshake that did not complete
// (on the loop, once the engine connection has closed and the handshake
// goroutine has ended).
func (w *wrapper) handshakeFailed(c *Conn) {
	if w.hh == nil {
		return
	}
	err := c.hsErr
	if err == nil { // the handshake completed as the connection closed
		err = c.closeErr
	}
	if !errors.Is(err, ErrHandshake) {
		err = fmt.Errorf("%w: %w", ErrHandshake, err)
	}
	w.hh.OnHandshakeError(c.ec, err)
}

func (w *wrapper) OnWritabilityChanged(ec *engine.Conn, writable bool) {
	if c := ec.Value().(*Conn); c.hs.wh != nil && c.opened && c.st == stOpen {
		c.hs.wh.OnWritabilityChanged(c, writable)
	}
}

// OnReadClosed implements engine.HalfCloseHandler: the peer's TCP FIN.
// Without the handler's HalfCloseHandler, or before the handshake is done,
// it closes the connection as a plain FIN would (OnClose judges whether
// the peer stopped inside a record); with it, the handler hears of the end
// once what came before it is delivered.
//
// A FIN during the handshake ends the transport's input instead: the
// handshake may still complete on what came before it (a client's Finished
// and its first requests, sent in one go), and those records are then
// delivered before the end.
func (w *wrapper) OnReadClosed(ec *engine.Conn) {
	c := ec.Value().(*Conn)
	switch {
	case c.st == stHandshake:
		c.finSeen = true
		c.tr.closeWith(io.EOF)
	case c.hs.rh == nil || c.st != stOpen:
		_ = ec.CloseWithError(io.EOF)
	default:
		c.finSeen = true
		c.peerDone()
	}
}

// OnShutdown implements engine.ShutdownHandler: an established connection
// says goodbye (the handler's OnShutdown, then close_notify) before the
// loop's shutdown closes it; one still in its handshake is closed as it
// stands (OnHandshakeError).
func (w *wrapper) OnShutdown(ec *engine.Conn) {
	c := ec.Value().(*Conn)
	if c.st != stOpen {
		return
	}
	if c.hs.sh != nil {
		c.hs.sh.OnShutdown(c)
	}
	c.closeWith(engine.ErrShutdown)
}
