package netconn

import (
	"errors"

	"github.com/ringloop/ringloop/looptls"
)

// HijackTLS is Hijack for a TLS connection on the loop (package looptls):
// the returned Conn reads and writes plaintext while the records are still
// decrypted and encrypted on the loop, so a protocol written for net (a
// WebSocket library, a proxy) runs over the connection an HTTPS server
// took over. pending is plaintext the old handler received and did not
// consume; Read returns it first. Close sends close_notify, as does
// CloseWrite before the half-close. It must run on the connection's loop,
// from a callback or task of it.
func HijackTLS(c *looptls.Conn, pending []byte, opts ...Option) (*Conn, error) {
	if c == nil {
		return nil, errors.New("netconn: HijackTLS of a nil connection")
	}
	cfg, err := newConfig(opts)
	if err != nil {
		return nil, err
	}
	nc := newConn(c.Engine().Loop(), cfg, "")
	nc.laddr, nc.raddr = c.LocalAddr(), c.RemoteAddr()
	if nc.laddr != nil {
		nc.network = nc.laddr.Network()
	}
	if err := c.SetHandler(&tlsHandler{nc}, pending); err != nil {
		return nil, err
	}
	return nc, nil
}

// tlsHandler is the loop side of a Conn over TLS, as handler is over TCP.
type tlsHandler struct{ nc *Conn }

var (
	_ looptls.WritabilityHandler = (*tlsHandler)(nil)
	_ looptls.HalfCloseHandler   = (*tlsHandler)(nil)
)

func (h *tlsHandler) OnOpen(c *looptls.Conn)             { h.nc.attach(c, false) }
func (h *tlsHandler) OnData(_ *looptls.Conn, b []byte)   { h.nc.onData(b) }
func (h *tlsHandler) OnClose(_ *looptls.Conn, err error) { h.nc.onClose(err) }
func (h *tlsHandler) OnReadClosed(*looptls.Conn)         { h.nc.onReadClosed() }

func (h *tlsHandler) OnWritabilityChanged(_ *looptls.Conn, writable bool) {
	if writable {
		h.nc.move(false)
	}
}
