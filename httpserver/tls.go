package httpserver

import (
	"crypto/tls"
	"errors"
	"log/slog"
	"net"
	"slices"
	"time"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/loopgroup"
	"github.com/ringloop/ringloop/looptls"
)

// ErrUpgradeTLS is Response.Upgrade's answer on a TLS connection: its
// engine.Handler would write plaintext into the TLS stream; UpgradeTLS
// takes a looptls.Handler instead. ErrUpgradeNotTLS is UpgradeTLS's on a
// plain connection.
var (
	ErrUpgradeTLS    = errors.New("httpserver: Upgrade on a TLS connection (use UpgradeTLS)")
	ErrUpgradeNotTLS = errors.New("httpserver: UpgradeTLS on a plain connection (use Upgrade)")
)

// WithTLSConfig sets the TLS configuration ListenTLS serves with, as
// net/http's Server.TLSConfig: certificates, GetCertificate (SNI), client
// certificates, session tickets, cipher suites, versions. ListenTLS works
// on a clone, so cfg may serve other servers too. Listen ignores it (it
// serves plain HTTP, as net/http's ListenAndServe does).
func WithTLSConfig(cfg *tls.Config) Option {
	return func(c *config) error {
		if cfg == nil {
			return errors.New("httpserver: nil TLS config")
		}
		c.tls = cfg
		return nil
	}
}

// ListenTLS serves HTTPS as Listen serves HTTP, with crypto/tls driven by
// the loops (package looptls: an established connection costs no
// goroutine). As net/http's ListenAndServeTLS, certFile and keyFile name a
// PEM certificate (chain) and its key, loaded on each call; they may be
// empty when WithTLSConfig's configuration has Certificates,
// GetCertificate or GetConfigForClient. ALPN offers "http/1.1" (added
// when the configuration's NextProtos lacks it) and never "h2", which is
// removed: this server speaks only HTTP/1.x, and a client told "h2" would
// send HTTP/2. The handshake is bounded by the read-header timeout (or the
// read timeout), as in net/http.
func (s *Server) ListenTLS(loops engine.Loops, network, addr, certFile, keyFile string, opts ...loopgroup.ServerOption) (net.Addr, error) {
	if s.closing.Load() {
		return nil, ErrServerClosed
	}
	cfg, err := s.tlsConfig(certFile, keyFile)
	if err != nil {
		return nil, err
	}
	var lopts []looptls.Option
	if d := s.handshakeTimeout(); d > 0 {
		lopts = append(lopts, looptls.WithHandshakeTimeout(d))
	}
	return s.serve(loops, network, addr, looptls.Server((*tlsHandler)(s), cfg, lopts...), opts)
}

// tlsConfig is ListenTLS's configuration: a clone of WithTLSConfig's, with
// the certificate files loaded and ALPN set to HTTP/1.1.
func (s *Server) tlsConfig(certFile, keyFile string) (*tls.Config, error) {
	cfg := &tls.Config{}
	if s.cfg.tls != nil {
		cfg = s.cfg.tls.Clone()
	}
	hasCert := len(cfg.Certificates) > 0 || cfg.GetCertificate != nil || cfg.GetConfigForClient != nil
	if !hasCert || certFile != "" || keyFile != "" {
		cert, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			return nil, err
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	// A copy: the slice may be shared with other configurations.
	protos := slices.DeleteFunc(slices.Clone(cfg.NextProtos), func(p string) bool { return p == "h2" })
	if !slices.Contains(protos, "http/1.1") {
		protos = append(protos, "http/1.1")
	}
	cfg.NextProtos = protos
	return cfg, nil
}

// handshakeTimeout is net/http's: the shorter of the read-header and read
// timeouts; none (looptls's default then) when both are off.
func (s *Server) handshakeTimeout() (d time.Duration) {
	for _, t := range []time.Duration{s.cfg.readHeader, s.cfg.read} {
		if t > 0 && (d == 0 || t < d) {
			d = t
		}
	}
	return d
}

// tlsHandler is the Server as looptls sees it: the connections it serves
// once their handshake is done, through the same state as plain ones.
type tlsHandler Server

// OnOpen implements looptls.Handler. A protocol other than HTTP/1.x
// negotiated by ALPN (a configuration shared with another service, such as
// ACME's "acme-tls/1") closes the connection, as net/http does.
func (h *tlsHandler) OnOpen(c *looptls.Conn) {
	cs := (*Server)(h).newConn(link{ec: c.Engine(), tc: c})
	c.SetValue(cs)
	if p := c.NegotiatedProtocol(); p != "" && p != "http/1.1" && p != "http/1.0" {
		_ = c.Close()
		return
	}
	cs.open()
}

// OnData implements looptls.Handler.
func (*tlsHandler) OnData(c *looptls.Conn, b []byte) { c.Value().(*conn).onData(b) }

// OnClose implements looptls.Handler.
func (h *tlsHandler) OnClose(c *looptls.Conn, err error) {
	(*Server)(h).closed(c.Value().(*conn), err)
}

// OnReadClosed implements looptls.HalfCloseHandler: the client's
// close_notify (or FIN) after pipelined requests, which are still answered,
// as over plain TCP.
func (*tlsHandler) OnReadClosed(c *looptls.Conn) { c.Value().(*conn).onReadClosed() }

// OnWritabilityChanged implements looptls.WritabilityHandler.
func (*tlsHandler) OnWritabilityChanged(c *looptls.Conn, writable bool) {
	c.Value().(*conn).onWritable(writable)
}

// OnPlaintext implements looptls.PlaintextHandler: a client that sends
// plain HTTP to the TLS port gets net/http's answer, a 400 that says so,
// before the connection closes.
func (*tlsHandler) OnPlaintext(c *engine.Conn, head []byte) {
	if looksLikeHTTP(head) {
		_, _ = c.Write([]byte(plainToTLS))
	}
}

// plainToTLS is the answer to plain HTTP on the TLS port, as net/http's.
const plainToTLS = "HTTP/1.0 400 Bad Request\r\n\r\nClient sent an HTTP request to an HTTPS server.\n"

// looksLikeHTTP reports whether the first five bytes of a connection start
// an HTTP/1.x request (the methods net/http checks for).
func looksLikeHTTP(head []byte) bool {
	switch string(head) {
	case "GET /", "HEAD ", "POST ", "PUT /", "OPTIO":
		return true
	}
	return false
}

// OnHandshakeError implements looptls.HandshakeErrorHandler: a failed
// handshake is logged at warning level, as net/http logs it to ErrorLog (a
// plain HTTP request to the TLS port is one, answered by OnPlaintext).
func (h *tlsHandler) OnHandshakeError(c *engine.Conn, err error) {
	(*Server)(h).logger().Warn("httpserver: TLS handshake error", slog.Any("remote", c.RemoteAddr()), slog.Any("err", err))
}

// tlsState is the connection's TLS state, made once and shared by its
// requests (as net/http's); nil on a plain connection.
func (cs *conn) tlsState() *tls.ConnectionState {
	if cs.c.tc == nil {
		return nil
	}
	if cs.c.state == nil {
		st := cs.c.tc.ConnectionState()
		cs.c.state = &st
	}
	return cs.c.state
}

// TLS returns the connection's TLS state (version, cipher suite,
// ServerName from SNI, NegotiatedProtocol, peer certificates), or nil on
// a plain connection. It is made once per connection; do not modify it.
func (r *Request) TLS() *tls.ConnectionState {
	if r.tc == nil {
		return nil
	}
	if cs, ok := r.tc.Value().(*conn); ok {
		return cs.tlsState()
	}
	return nil // the connection was upgraded or hijacked
}
