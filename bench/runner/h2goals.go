package runner

import (
	"strings"

	"github.com/ringloop/ringloop/bench/stats"
)

// The HTTP/2 cases the goals read: h2load's 50 connections × 100 streams
// over TLS and in clear, and idle connections that negotiated h2.
const (
	h2Case     = "p1-h2-c50-m100"
	h2cCase    = "p1-h2c-c50-m100"
	h2IdleCase = "p1-idle-h2-10k"
	grpcCase   = "p1-grpc-c50-m100"
)

// h2Adapter and h2Fast name the HTTP/2 rows of each API, TLS and h2c.
var (
	h2Adapter = []string{"ringloop-h2-adapter-uring", "ringloop-h2-adapter-epoll", "ringloop-h2c-adapter-uring", "ringloop-h2c-adapter-epoll"}
	h2Fast    = []string{"ringloop-h2-uring", "ringloop-h2-epoll", "ringloop-h2c-uring", "ringloop-h2c-epoll"}
)

// h2Goals are issue 43's, each row read against net/http's HTTP/2 in its
// own transport's case: the adapter at 1.5× net/http's requests/s or 0.6×
// its CPU per request (either meets it), the fast API at 0.35× its CPU per
// request, and an idle h2 connection at a quarter of net/http's memory.
var h2Goals = []goal{
	{"req/s ÷ net/http", "≥ 1.5", byTransport(rateVs(h2Case, "net/http+h2"), rateVs(h2cCase, "net/http-h2c")), atLeast(1.5), h2Adapter, 2},
	{"CPU/req ÷ net/http", "≤ 0.6", byTransport(figureVs(h2Case, "net/http+h2", cpuPerReq), figureVs(h2cCase, "net/http-h2c", cpuPerReq)), atMost(0.6), h2Adapter, 2},
	{"fast API CPU/req ÷ net/http", "≤ 0.35", byTransport(figureVs(h2Case, "net/http+h2", cpuPerReq), figureVs(h2cCase, "net/http-h2c", cpuPerReq)), atMost(0.35), h2Fast, 2},
	{"RSS per idle h2 conn ÷ net/http", "≤ 0.25", figureVs(h2IdleCase, "net/http+h2", func(r Row) stats.Spread { return r.RSSPerConn }), atMost(0.25), h2Adapter[:2], 2},
}

// grpcGoals are issue 43's for gRPC unary through the adapter: grpc-go's
// own server's rate (on net) at 0.8× its CPU per RPC, both.
var grpcGoals = []goal{
	{"RPCs/s ÷ grpc-go", "≥ 1", rateVs(grpcCase, "grpc-go"), atLeast(1), nil, 2},
	{"CPU/RPC ÷ grpc-go", "≤ 0.8", figureVs(grpcCase, "grpc-go", cpuPerReq), atMost(0.8), nil, 2},
}

func cpuPerReq(r Row) stats.Spread { return r.CPUPerReq }

// byTransport reads a TLS row (ringloop-h2-...) with tls and an h2c row
// (ringloop-h2c-...) with h2c.
func byTransport(tls, h2c func(Report, string, string) (float64, bool)) func(Report, string, string) (float64, bool) {
	return func(rep Report, peer, mode string) (float64, bool) {
		if strings.HasPrefix(peer, "ringloop-h2c-") {
			return h2c(rep, peer, mode)
		}
		return tls(rep, peer, mode)
	}
}
