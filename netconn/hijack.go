package netconn

import (
	"errors"

	"github.com/ringloop/ringloop/engine"
)

// Hijack turns a connection some engine.Handler serves into a *Conn, a
// net.Conn for ordinary goroutines: what an HTTP server's http.Hijacker
// returns, or any protocol upgrade handed to code written for net. pending
// is what the old handler received and did not consume; Read returns it
// first. From then on the connection's callbacks feed the Conn (see
// engine.Conn.SetHandler); options other than WithConnOptions apply (the
// buffer limits). Hijack must run on the connection's loop, from a callback
// or task of it.
func Hijack(c *engine.Conn, pending []byte, opts ...Option) (*Conn, error) {
	if c == nil {
		return nil, errors.New("netconn: Hijack of a nil connection")
	}
	cfg, err := newConfig(opts)
	if err != nil {
		return nil, err
	}
	nc := newConn(c.Loop(), cfg, "")
	nc.laddr, nc.raddr = c.LocalAddr(), c.RemoteAddr()
	if nc.laddr != nil {
		nc.network = nc.laddr.Network()
	}
	if err := c.SetHandler(&handler{nc: nc, cfg: cfg}, pending); err != nil {
		return nil, err
	}
	return nc, nil
}
