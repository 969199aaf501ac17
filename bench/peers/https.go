package peers

import (
	"crypto/tls"
	"net"
	"net/http"

	"github.com/ringloop/ringloop/engine"
)

// The HTTPS peers serve the HTTP peers' answers behind TLS 1.3 with the
// TLS echo peers' certificate, ALPN http/1.1: net/http with crypto/tls (a
// goroutine per connection) against ringloop's httpserver with TLS run by
// the loop (looptls), fast API and adapter. They form no family: the
// default-versus-best comparison covers the plain HTTP rows.
func init() {
	Register(Peer{Name: "net/http+tls", Kind: HTTPS, Doc: "net/http over crypto/tls (ServeTLS, HTTP/1.1 only), the net/http peer's handler", Start: startNetHTTPS})
	for _, b := range Backends {
		for _, adapter := range []bool{false, true} {
			name, doc := "ringloop-http-tls-", "ringloop httpserver fast API over TLS on the loop (ListenTLS), one loop"
			if adapter {
				name, doc = "ringloop-http-adapter-tls-", "ringloop httpserver adapter (the net/http peer's handler) over TLS on the loop (ListenTLS), one loop"
			}
			Register(Peer{
				Name:       name + rowSuffix(b),
				Kind:       HTTPS,
				Doc:        doc + "; " + b.String() + " backend forced",
				Start:      func(c Config) (Server, error) { return startRingloopHTTPS(b, c, adapter) },
				Modes:      RingloopModes,
				NeedsURing: b == engine.BackendUring,
			})
		}
	}
}

// httpsConfig is TLSServerConfig offering HTTP/1.1 by ALPN.
func httpsConfig() (*tls.Config, error) {
	cfg, err := TLSServerConfig()
	if err != nil {
		return nil, err
	}
	cfg = cfg.Clone()
	cfg.NextProtos = []string{"http/1.1"}
	return cfg, nil
}

func startNetHTTPS(c Config) (Server, error) {
	cfg, err := httpsConfig()
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", c.Addr)
	if err != nil {
		return nil, err
	}
	// An empty TLSNextProto turns HTTP/2 off: both sides speak HTTP/1.1.
	srv := &http.Server{Handler: plaintextHandler("net/http"), TLSConfig: cfg, TLSNextProto: map[string]func(*http.Server, *tls.Conn, http.Handler){}}
	go func() { _ = srv.ServeTLS(ln, "", "") }()
	return &closer{addr: ln.Addr().String(), info: Info{Backend: "netpoll", Threading: "goroutines"}, close: srv.Close}, nil
}

func startRingloopHTTPS(b engine.Backend, c Config, adapter bool) (Server, error) {
	cfg, err := httpsConfig()
	if err != nil {
		return nil, err
	}
	return startRingloopHTTP(b, c, adapter, cfg)
}
