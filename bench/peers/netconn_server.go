package peers

import (
	"net"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/netconn"
)

// startOnNetconn serves on a net.Listener of ringloop's (package netconn)
// backed by one loop on backend b: serve starts the server on the listener and returns
// what stops it; detail says what serves, for the banner.
func startOnNetconn(b engine.Backend, c Config, detail string, serve func(net.Listener) (stop func() error)) (Server, error) {
	loop, err := benchLoop(c, engine.WithBackend(b))
	if err != nil {
		return nil, err
	}
	ln, err := netconn.Listen(loop, "tcp", c.Addr)
	if err != nil {
		_ = loop.Close()
		return nil, err
	}
	stop := serve(ln)
	bi := loop.Backend()
	return &closer{addr: ln.Addr().String(), info: Info{Backend: bi.Name.String(), Threading: bi.Threading.String(), Detail: detail + " on netconn; " + bi.Features.String()},
		close: func() error {
			_ = stop()
			return loop.Close()
		}}, nil
}
