package httpserver

import (
	"crypto/tls"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/loopgroup"
	"github.com/ringloop/ringloop/looptls"
)

// ListenTLS serves HTTPS as Listen serves HTTP, with crypto/tls driven by
// the loops (package looptls: an established connection costs no
// goroutine). As net/http's ListenAndServeTLS, certFile and keyFile name a
// PEM certificate (chain) and its key, loaded on each call; they may be
// empty when WithTLSConfig's configuration has Certificates,
// GetCertificate or GetConfigForClient. ALPN offers HTTP/2 ("h2") first
// and HTTP/1.1, as net/http does, unless the configuration's NextProtos
// names "http/1.1" and not "h2" (see alpnProtos). The handshake is bounded
// by the read-header timeout (or the read timeout), as in net/http.
func (s *Server) ListenTLS(loops engine.Loops, network, addr, certFile, keyFile string, opts ...loopgroup.ServerOption) (net.Addr, error) {
	if s.closing.Load() {
		return nil, http.ErrServerClosed
	}
	cfg, err := s.tlsConfig(certFile, keyFile)
	if err != nil {
		return nil, err
	}
	var lopts []looptls.Option
	if d := s.handshakeTimeout(); d > 0 {
		lopts = append(lopts, looptls.WithHandshakeTimeout(d))
	}
	return s.serve(loops, network, addr, looptls.Server((*handler)(s), cfg, lopts...), opts)
}

// tlsConfig is ListenTLS's configuration: a clone of WithTLSConfig's, with
// the certificate files loaded and ALPN set to HTTP/2 and HTTP/1.1.
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
	cfg.NextProtos = alpnProtos(cfg.NextProtos)
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

// OnHandshakeError implements looptls.HandshakeErrorHandler: a failed
// handshake is logged at warning level, as net/http logs it to ErrorLog;
// a client that sent plain HTTP to the TLS port gets net/http's answer, a
// 400 that says so, before the connection closes.
func (h *handler) OnHandshakeError(c *engine.Conn, err error) {
	var rh tls.RecordHeaderError
	if errors.As(err, &rh) && rh.Conn != nil && looksLikeHTTP(rh.RecordHeader[:]) {
		_, _ = io.WriteString(rh.Conn, plainToTLS)
	}
	(*Server)(h).logger().Warn("httpserver: TLS handshake error", slog.Any("remote", c.RemoteAddr()), slog.Any("err", err))
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

// alpnRefused reports whether c negotiated by ALPN a protocol other than
// HTTP/1.x and HTTP/2 (a configuration shared with another service, such
// as ACME's "acme-tls/1"): net/http closes such a connection, and so does
// OnOpen.
func alpnRefused(c *engine.Conn) bool {
	p, _ := alpn(c)
	return p != "" && p != "http/1.1" && p != "http/1.0" && p != "h2"
}

// tlsState is the connection's TLS state, made once and shared by its
// requests (as net/http's); nil on a plain connection.
func (cs *conn) tlsState() *tls.ConnectionState {
	if cs.tls == nil {
		st, ok := looptls.State(cs.c)
		if !ok {
			return nil
		}
		cs.tls = new(tls.ConnectionState)
		*cs.tls = st // st itself stays on the stack: a plain connection allocates nothing here
	}
	return cs.tls
}

// TLS returns the connection's TLS state (version, cipher suite,
// ServerName from SNI, NegotiatedProtocol, peer certificates), or nil on
// a plain connection. It is made once per connection; do not modify it.
func (r *Request) TLS() *tls.ConnectionState {
	if cs, ok := r.conn.Value().(*conn); ok {
		return cs.tlsState()
	}
	return nil // the connection was upgraded or hijacked
}
