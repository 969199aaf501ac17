package peers

import (
	"crypto/tls"
	"net"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/httpserver"
)

func init() {
	registerFamily("ringloop-http", HTTP, FamilyHTTP, "ringloop httpserver, fast API (handler on the loop, 0 allocs/request), one loop",
		func(b engine.Backend, c Config) (Server, error) { return startRingloopHTTP(b, c, false, nil) })
	registerFamily("ringloop-http-adapter", HTTP, FamilyAdapter,
		"ringloop httpserver serving an http.Handler (the net/http peer's handler; a goroutine per request, response written back on the loop), one loop",
		func(b engine.Backend, c Config) (Server, error) { return startRingloopHTTP(b, c, true, nil) })
}

// ringloopHTTP is one loop serving the plaintext answer.
type ringloopHTTP struct {
	loop *engine.Loop
	srv  *httpserver.Server
	addr string
	info Info
}

var plaintext = []byte(PlaintextBody)

// startRingloopHTTP serves the fast API's answer or, with adapter, the
// net/http peer's handler; with tlsCfg, over TLS (ListenTLS); extra options
// last.
func startRingloopHTTP(b engine.Backend, c Config, adapter bool, tlsCfg *tls.Config, extra ...httpserver.Option) (Server, error) {
	loop, err := benchLoop(c, engine.WithBackend(b))
	if err != nil {
		return nil, err
	}
	var srv *httpserver.Server
	var opts []httpserver.Option
	if tlsCfg != nil {
		opts = append(opts, httpserver.WithTLSConfig(tlsCfg))
	}
	opts = append(opts, extra...)
	if adapter {
		srv, err = httpserver.New(plaintextHandler("ringloop"), opts...)
	} else {
		srv, err = httpserver.NewFast(httpserver.HandlerFunc(func(w *httpserver.Response, _ *httpserver.Request) {
			w.AddHeader("Server", "ringloop") // the plaintext rules ask for Server, as the other peers send
			w.AddHeader("Content-Type", "text/plain")
			_, _ = w.Write(plaintext)
		}), opts...)
	}
	if err != nil {
		_ = loop.Close()
		return nil, err
	}
	var a net.Addr
	if tlsCfg != nil {
		a, err = srv.ListenTLS(loop, "tcp", c.Addr, "", "")
	} else {
		a, err = srv.Listen(loop, "tcp", c.Addr)
	}
	if err != nil {
		_ = loop.Close()
		return nil, err
	}
	bi := loop.Backend()
	return &ringloopHTTP{loop, srv, a.String(), Info{Backend: bi.Name.String(), Threading: bi.Threading.String(), Detail: bi.Features.String()}}, nil
}

func (s *ringloopHTTP) Addr() string { return s.addr }
func (s *ringloopHTTP) Info() Info   { return s.info }

func (s *ringloopHTTP) Close() error {
	_ = s.srv.Close()
	return s.loop.Close()
}
