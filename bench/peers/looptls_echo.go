package peers

import (
	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/looptls"
)

func init() {
	registerFamily("looptls", TLSEcho, FamilyLoopTLS,
		"TLS echo on the loop (package looptls: crypto/tls records driven by the loop, no goroutine per connection), one loop", startLoopTLSEcho)
}

// loopTLSEcho echoes the plaintext it receives, on the loop.
type loopTLSEcho struct{}

func (loopTLSEcho) OnOpen(*engine.Conn)             {}
func (loopTLSEcho) OnData(c *engine.Conn, b []byte) { _, _ = c.Write(b) }
func (loopTLSEcho) OnClose(*engine.Conn, error)     {}

func startLoopTLSEcho(b engine.Backend, c Config) (Server, error) {
	cfg, err := TLSServerConfig()
	if err != nil {
		return nil, err
	}
	loop, err := benchLoop(c, engine.WithBackend(b))
	if err != nil {
		return nil, err
	}
	ln, err := engine.Listen(loop, "tcp", c.Addr, looptls.Server(loopTLSEcho{}, cfg))
	if err != nil {
		_ = loop.Close()
		return nil, err
	}
	bi := loop.Backend()
	return &ringloopServer{loop, ln, Info{Backend: bi.Name.String(), Threading: bi.Threading.String(), Detail: "crypto/tls 1.3 on the loop, ECDSA P-256, " + bi.Features.String()}}, nil
}
