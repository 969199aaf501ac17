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
	srv := &http.Server{Handler: plaintextHandler("net/http")}
	go func() { _ = srv.Serve(ln) }()
	return &closer{addr: ln.Addr().String(), info: Info{Backend: "netpoll", Threading: "goroutines"}, close: srv.Close}, nil
}

// plaintextHandler is the one http.Handler every server of the standard
// interface runs (net/http, net/http on netconn, ringloop's adapter), so
// their rows differ only in what serves it; server names the Server header.
// net/http and the adapter add Date and Content-Length.
func plaintextHandler(server string) http.Handler {
	name, body := []string{server}, []byte(PlaintextBody)
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hd := w.Header()
		hd["Server"] = name
		hd["Content-Type"] = []string{"text/plain"}
		_, _ = w.Write(body)
	})
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
