package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/ringloop/ringloop/bench/client"
	"github.com/ringloop/ringloop/bench/peers"
	"github.com/ringloop/ringloop/bench/stats"
)

// h2load drives an HTTP/2 server (kind H2 over TLS, H2C and GRPC in
// clear) with h2load, pinned as wrk is: c.Conns connections of c.InFlight
// streams each, for c.Duration, GET /plaintext, or for GRPC a POST of
// peers.GRPCRequest to peers.GRPCMethod. It returns the requests that
// succeeded; any failed, errored, timed-out or non-2xx one fails the round,
// as do answers carrying fewer body bytes than one plaintext body (or gRPC
// message) each: a gRPC error is a 200 with no message, its status in the
// trailers, which h2load does not read.
func (r *Runner) h2load(ctx context.Context, c Case, addr string, rd *Round) (int64, error) {
	if _, err := exec.LookPath("h2load"); err != nil {
		return 0, errors.New("h2load is not installed (make deps installs nghttp2-client)")
	}
	cfg := client.H2LoadConfig{Addr: addr, Conns: c.Conns, Streams: c.InFlight, Duration: c.Duration, TLS: c.Kind == peers.H2, Wrap: r.wrap(c)}
	req, body := peers.GRPCRequest(), len(peers.PlaintextBody)
	if c.Kind == peers.GRPC {
		body = len(req) // the message back as it came
		cfg.Path, cfg.Data = peers.GRPCMethod, filepath.Join(r.Bin, "grpc-request.bin")
		cfg.Headers = []string{"content-type: application/grpc", "te: trailers"}
		if err := os.WriteFile(cfg.Data, req, 0o644); err != nil {
			return 0, err
		}
	}
	res, err := client.RunH2Load(ctx, cfg)
	if err != nil {
		return 0, err
	}
	if res.Failed > 0 || res.Errored > 0 || res.TimedOut > 0 || res.Non2xx > 0 {
		return 0, fmt.Errorf("h2load saw %d failed, %d errored, %d timed-out requests and %d non-2xx answers (%d succeeded)",
			res.Failed, res.Errored, res.TimedOut, res.Non2xx, res.Requests)
	}
	if res.Data < res.Requests*int64(body) {
		return 0, fmt.Errorf("h2load: %d body bytes in answers to %d requests, fewer than the %d-byte answer each", res.Data, res.Requests, body)
	}
	rd.Rate = stats.Num(res.Rate)
	return res.Requests, nil
}

// h2Idle are the rows of the idle HTTP/2 case: net/http's and the
// adapter's (an idle connection's state is the same under either API).
var h2Idle = []string{"net/http+h2", "ringloop-h2-adapter-uring", "ringloop-h2-adapter-epoll"}
