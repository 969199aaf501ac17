package peers

import (
	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/examples/echo"
)

func init() {
	registerFamily("ringloop", Echo, FamilyEcho, "ringloop echo (examples/echo handler) on one loop", startRingloopEcho)
}

// ringloopServer is one loop serving one listener.
type ringloopServer struct {
	loop *engine.Loop
	ln   *engine.Listener
	info Info
}

func startRingloopEcho(b engine.Backend, c Config) (Server, error) {
	loop, err := benchLoop(c, engine.WithBackend(b))
	if err != nil {
		return nil, err
	}
	ln, err := engine.Listen(loop, "tcp", c.Addr, echo.Handler{})
	if err != nil {
		_ = loop.Close()
		return nil, err
	}
	bi := loop.Backend()
	return &ringloopServer{loop, ln, Info{Backend: bi.Name.String(), Threading: bi.Threading.String(), Detail: bi.Features.String()}}, nil
}

func (s *ringloopServer) Addr() string { return s.ln.Addr().String() }
func (s *ringloopServer) Info() Info   { return s.info }

func (s *ringloopServer) Close() error {
	_ = s.ln.Close()
	return s.loop.Close()
}
