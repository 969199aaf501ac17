package looptls

import (
	"crypto/tls"
	"errors"
	"fmt"
	"os"

	"github.com/ringloop/ringloop/engine"
)

// HandshakeErrorHandler is an optional extension of the handler given to
// Server or Client: it learns of a connection whose handshake did not
// complete (a timeout, a peer that closed or sent an alert, a certificate
// refused), which never reaches OnOpen nor OnClose. err wraps ErrHandshake
// and crypto/tls's error. It runs on the loop, before the connection
// closes when the handshake itself failed: a server whose clients may
// speak the plain protocol to its TLS port answers them in plaintext
// through the tls.RecordHeaderError in err, as net/http does (its Conn
// writes below TLS; what it writes is sent before the close).
type HandshakeErrorHandler interface {
	OnHandshakeError(c *engine.Conn, err error)
}

// Errors.
var (
	// ErrHandshake is wrapped by every handshake failure.
	ErrHandshake = errors.New("looptls: handshake failed")
	// ErrHandshakeTimeout: the handshake did not complete within the
	// handshake timeout (WithHandshakeTimeout).
	ErrHandshakeTimeout = fmt.Errorf("looptls: handshake timed out: %w", os.ErrDeadlineExceeded)
)

// Server returns the engine.Handler that serves TLS with cfg on the
// connections of a listener, h receiving and writing plaintext through an
// ordinary *engine.Conn once the handshake is done:
//
//	engine.Listen(loop, "tcp", addr, looptls.Server(h, cfg))
//
// cfg must not be changed afterwards (crypto/tls's rule).
func Server(h engine.Handler, cfg *tls.Config, opts ...Option) engine.Handler {
	return newSide(h, cfg, false, opts)
}

// Client returns the engine.Handler that runs the client side of TLS with
// cfg on a connection engine.Dial makes, h receiving and writing
// plaintext. Set cfg.ServerName (or InsecureSkipVerify): the engine
// connection knows only the peer's address. Dial's future gives the
// connection once TCP connects; what is written to it before h's OnOpen
// (the handshake's end) waits and is encrypted after.
func Client(h engine.Handler, cfg *tls.Config, opts ...Option) engine.Handler {
	return newSide(h, cfg, true, opts)
}

// side is what every connection of a Server or Client shares.
type side struct {
	cfg    *tls.Config
	client bool
	o      options
	hh     HandshakeErrorHandler
}

func newSide(h engine.Handler, cfg *tls.Config, client bool, opts []Option) engine.Handler {
	s := &side{cfg: cfg, client: client, o: newOptions(opts)}
	s.hh, _ = h.(HandshakeErrorHandler)
	return engine.Layer(h, s.newTransport)
}

// State returns c's TLS state once its handshake is done (version, cipher
// suite, NegotiatedProtocol from ALPN, ServerName from SNI, the peer's
// certificates, DidResume), and false for a connection without TLS or
// still in its handshake. Safe from any goroutine; it copies the state.
func State(c *engine.Conn) (tls.ConnectionState, bool) {
	t, ok := c.Transport().(*transport)
	if !ok || !t.done.Load() {
		return tls.ConnectionState{}, false
	}
	return t.tc.ConnectionState(), true
}
