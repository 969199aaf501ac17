package peers

import (
	"crypto/tls"
	"net"
	"net/http"
)

// The HTTP/2 baselines: net/http's own HTTP/2 server with the net/http
// peer's handler, over TLS 1.3 (ALPN "h2", net/http's built-in HTTP/2) and
// in clear with prior knowledge (Server.Protocols with UnencryptedHTTP2,
// no golang.org/x/net): a goroutine per connection and one per stream.
func init() {
	Register(Peer{Name: "net/http+h2", Kind: H2, Doc: "net/http's HTTP/2 over crypto/tls (ServeTLS, ALPN h2), the net/http peer's handler", Start: startNetHTTPH2})
	Register(Peer{Name: "net/http-h2c", Kind: H2C, Doc: "net/http's HTTP/2 in clear with prior knowledge (Protocols: HTTP/1 and UnencryptedHTTP2), the net/http peer's handler", Start: startNetHTTPH2C})
}

// h2Config is TLSServerConfig offering HTTP/2 and then HTTP/1.1 by ALPN,
// as net/http and httpserver offer them by default.
func h2Config() (*tls.Config, error) {
	cfg, err := TLSServerConfig()
	if err != nil {
		return nil, err
	}
	cfg = cfg.Clone()
	cfg.NextProtos = []string{"h2", "http/1.1"}
	return cfg, nil
}

func startNetHTTPH2(c Config) (Server, error) {
	cfg, err := h2Config()
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", c.Addr)
	if err != nil {
		return nil, err
	}
	srv := &http.Server{Handler: plaintextHandler("net/http"), TLSConfig: cfg}
	go func() { _ = srv.ServeTLS(ln, "", "") }()
	return &closer{addr: ln.Addr().String(), info: Info{Backend: "netpoll", Threading: "goroutines"}, close: srv.Close}, nil
}

func startNetHTTPH2C(c Config) (Server, error) {
	ln, err := net.Listen("tcp", c.Addr)
	if err != nil {
		return nil, err
	}
	var p http.Protocols
	p.SetHTTP1(true)
	p.SetUnencryptedHTTP2(true)
	srv := &http.Server{Handler: plaintextHandler("net/http"), Protocols: &p}
	go func() { _ = srv.Serve(ln) }()
	return &closer{addr: ln.Addr().String(), info: Info{Backend: "netpoll", Threading: "goroutines"}, close: srv.Close}, nil
}
