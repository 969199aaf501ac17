package peers

import (
	"context"
	"net/http"
	"time"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/netconn"
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
	opts, err := ringloopThreading(c.Threading)
	if err != nil {
		return nil, err
	}
	loop, err := engine.New(append(opts, engine.WithName("bench"))...)
	if err != nil {
		return nil, err
	}
	ln, err := netconn.Listen(loop, "tcp", c.Addr)
	if err != nil {
		_ = loop.Close()
		return nil, err
	}
	h := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hd := w.Header()
		hd["Server"] = []string{"net/http"}
		hd["Content-Type"] = []string{"text/plain"}
		_, _ = w.Write([]byte(PlaintextBody))
	})
	srv := &http.Server{Handler: h}
	go func() { _ = srv.Serve(ln) }()
	bi := loop.Backend()
	return &closer{addr: ln.Addr().String(), info: Info{Backend: bi.Name, Threading: loop.Threading().String(), Detail: "net/http on netconn; " + bi.Features.String()},
		close: func() error {
			_ = srv.Close()
			_, err := loop.ShutdownGracefully(0, 2*time.Second).Await(context.Background())
			return err
		}}, nil
}
