package netconn

import "github.com/ringloop/ringloop/engine"

// handler is the engine side of every Conn: it runs on the connection's
// loop and feeds the Conn's buffers. A dialed connection's Conn exists
// before the connect completes (nc); an accepted one is made in OnOpen and
// queued for Accept (ln).
type handler struct {
	ln      *Listener
	nc      *Conn
	cfg     *config
	network string
}

var (
	_ engine.WritabilityHandler = (*handler)(nil)
	_ engine.HalfCloseHandler   = (*handler)(nil)
)

func connOf(c *engine.Conn) *Conn {
	nc, _ := c.Value().(*Conn)
	return nc
}

func (h *handler) OnOpen(c *engine.Conn) {
	nc := h.nc
	if nc == nil {
		nc = newConn(c.Loop(), h.cfg, h.network)
	}
	nc.attach(c, h.nc == nil) // Dial reads a dialed connection's addresses itself
	c.SetValue(nc)
	if h.ln != nil {
		h.ln.push(nc)
	}
}

func (h *handler) OnData(c *engine.Conn, b []byte) {
	if nc := connOf(c); nc != nil {
		nc.onData(b)
	}
}

func (h *handler) OnClose(c *engine.Conn, err error) {
	if nc := connOf(c); nc != nil {
		nc.onClose(err)
	}
}

func (h *handler) OnWritabilityChanged(c *engine.Conn, writable bool) {
	if nc := connOf(c); nc != nil && writable {
		nc.move(false)
	}
}

func (h *handler) OnReadClosed(c *engine.Conn) {
	if nc := connOf(c); nc != nil {
		nc.onReadClosed()
	}
}
