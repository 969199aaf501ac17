package peers

import (
	"net"
	"net/http"
)

func init() {
	Register(Peer{
		Name:  "net/http-on-ringloop",
		Kind:  HTTP,
		Doc:   "net/http server (the net/http peer's handler) on ringloop's net.Listener (package netconn), one loop, io_uring where the kernel allows it",
		Start: startNetHTTPRingloop,
		Modes: RingloopModes,
	})
}

func startNetHTTPRingloop(c Config) (Server, error) {
	h := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hd := w.Header()
		hd["Server"] = []string{"net/http"}
		hd["Content-Type"] = []string{"text/plain"}
		_, _ = w.Write([]byte(PlaintextBody))
	})
	return startOnNetconn(c, "net/http", func(ln net.Listener) func() error {
		srv := &http.Server{Handler: h}
		go func() { _ = srv.Serve(ln) }()
		return srv.Close
	})
}
