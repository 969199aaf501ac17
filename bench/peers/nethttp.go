package peers

import (
	"net"
	"net/http"
)

func init() {
	Register(Peer{Name: "net/http", Kind: HTTP, Doc: "net/http server, one handler writing the plaintext body", Start: startNetHTTP})
}

func startNetHTTP(c Config) (Server, error) {
	ln, err := net.Listen("tcp", c.Addr)
	if err != nil {
		return nil, err
	}
	h := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hd := w.Header()
		hd["Server"] = []string{"net/http"}
		hd["Content-Type"] = []string{"text/plain"}
		_, _ = w.Write([]byte(PlaintextBody)) // net/http adds Date and Content-Length
	})
	srv := &http.Server{Handler: h}
	go func() { _ = srv.Serve(ln) }()
	return &closer{addr: ln.Addr().String(), info: Info{Backend: "netpoll", Threading: "goroutines"}, close: srv.Close}, nil
}

// closer is a Server whose Close is one function.
type closer struct {
	addr  string
	info  Info
	close func() error
}

func (s *closer) Addr() string { return s.addr }
func (s *closer) Info() Info   { return s.info }
func (s *closer) Close() error { return s.close() }
