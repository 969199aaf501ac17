package loopgroup

import (
	"context"

	"github.com/ringloop/ringloop/engine"
)

// Dial connects to addr from the group's next loop and waits for the
// connection; h serves it on that loop for its whole life (Netty's Bootstrap
// on a group). The connection counts in Group.Connections. Call it off the
// group's loops: from a loop use engine.DialAsync.
func (g *Group) Dial(ctx context.Context, network, addr string, h engine.Handler, opts ...engine.ConnOption) (*engine.Conn, error) {
	if g.InEventLoop() {
		return nil, ErrCalledFromLoop
	}
	l := g.Next()
	g.addLoad(l, 1)
	opts = append(opts[:len(opts):len(opts)], engine.WithObserver(&tracker{g: g, reserved: true}))
	c, err := engine.Dial(ctx, l, network, addr, h, opts...)
	if err != nil {
		g.addLoad(l, -1)
		return nil, err
	}
	return c, nil
}
