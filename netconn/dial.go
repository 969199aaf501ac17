package netconn

import (
	"context"
	"errors"
	"net"

	"github.com/ringloop/ringloop/engine"
)

// Dial connects to addr from loops.Next() (one *engine.Loop or a
// *loopgroup.Group) and returns the connection, served by that loop. The
// connect timeout is ctx's deadline, else engine's default of 30 s.
// Call it off the loops: it waits.
func Dial(ctx context.Context, loops engine.Loops, network, addr string, opts ...Option) (*Conn, error) {
	cfg, err := newConfig(opts)
	if err != nil {
		return nil, err
	}
	loop := loops.Next()
	nc := newConn(loop, cfg, network)
	c, err := engine.Dial(ctx, loop, network, addr, &handler{nc: nc, cfg: cfg, network: network}, cfg.conn...)
	if err != nil {
		var oe *net.OpError
		if !errors.As(err, &oe) { // engine's dial errors already are
			err = &net.OpError{Op: "dial", Net: network, Err: err}
		}
		return nil, err
	}
	// The loop never reads these; OnOpen may still be running there.
	nc.laddr, nc.raddr = c.LocalAddr(), c.RemoteAddr()
	return nc, nil
}

// Dialer dials through ringloop loops; its DialContext fits
// net/http.Transport.DialContext and the like.
type Dialer struct {
	Loops   engine.Loops // one *engine.Loop or a *loopgroup.Group
	Options []Option
}

// DialContext connects to address on network (see Dial).
func (d *Dialer) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	c, err := Dial(ctx, d.Loops, network, address, d.Options...)
	if err != nil {
		return nil, err
	}
	return c, nil
}
