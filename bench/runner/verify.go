package runner

import (
	"context"
	"time"

	"github.com/ringloop/ringloop/bench/client"
	"github.com/ringloop/ringloop/bench/peers"
)

// Checked is one server's correctness run: how many echoes came back
// intact, and (UDP) how many datagrams never came back.
type Checked struct {
	Label   string
	Backend string
	Detail  string
	Total   int64
	Lost    int64
	Err     error
}

// VerifyEcho runs every echo row's server in its own process and drives it
// with varying messages, checking every byte (SHA-256 per connection).
func (r *Runner) VerifyEcho(ctx context.Context, conns, size int, d time.Duration) []Checked {
	return r.verify(ctx, peers.Echo, func(addr string) (int64, int64, error) {
		res, err := client.RunEcho(ctx, client.EchoConfig{Addr: addr, Conns: conns, Size: size, Duration: d, Verify: true})
		return res.Total, 0, err
	})
}

// VerifyUDP runs every UDP echo row's server in its own process and drives
// it from sockets client sockets, each datagram's bytes its own and every
// echo checked byte for byte; a datagram that does not come back is
// counted lost.
func (r *Runner) VerifyUDP(ctx context.Context, sockets, size int, d time.Duration) []Checked {
	return r.verify(ctx, peers.UDPEcho, func(addr string) (int64, int64, error) {
		res, err := client.RunUDPEcho(ctx, client.UDPEchoConfig{Addr: addr, Sockets: sockets, InFlight: 8, Size: size, Duration: d, Verify: true})
		return res.Total, res.Lost, err
	})
}

// verify starts each row of kind's servers in turn and runs check against
// it.
func (r *Runner) verify(ctx context.Context, kind peers.Kind, check func(addr string) (total, lost int64, err error)) []Checked {
	var out []Checked
	for _, v := range r.variants(kind) {
		c := Checked{Label: v.label}
		srv, err := r.startServer(ctx, v, Pinned1)
		if err == nil {
			c.Backend, c.Detail = srv.kv["backend"], srv.kv["detail"]
			c.Total, c.Lost, err = check(srv.addr)
			if serr := srv.stop(); err == nil {
				err = serr
			}
		}
		c.Err = err
		out = append(out, c)
	}
	return out
}
