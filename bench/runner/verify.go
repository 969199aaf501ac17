package runner

import (
	"context"
	"time"

	"github.com/ringloop/ringloop/bench/client"
	"github.com/ringloop/ringloop/bench/peers"
)

// Checked is one echo server's correctness run.
type Checked struct {
	Label   string
	Backend string
	Detail  string
	Result  client.EchoResult
	Err     error
}

// VerifyEcho runs every echo row's server in its own process and drives it
// with varying messages, checking every byte (SHA-256 per connection).
func (r *Runner) VerifyEcho(ctx context.Context, conns, size int, d time.Duration) []Checked {
	var out []Checked
	for _, v := range r.variants(peers.Echo) {
		c := Checked{Label: v.label}
		srv, err := r.startServer(ctx, v, Pinned1)
		if err == nil {
			c.Backend, c.Detail = srv.kv["backend"], srv.kv["detail"]
			c.Result, err = client.RunEcho(ctx, client.EchoConfig{Addr: srv.addr, Conns: conns, Size: size, Duration: d, Verify: true})
			if serr := srv.stop(); err == nil {
				err = serr
			}
		}
		c.Err = err
		out = append(out, c)
	}
	return out
}
