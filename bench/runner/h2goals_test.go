package runner

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ringloop/ringloop/bench/stats"
)

// The HTTP/2 table reads each ringloop row against net/http's HTTP/2 in
// its own transport's case (TLS or h2c), the adapter by rate and by CPU,
// the fast API by CPU, and the adapter's idle memory.
func TestH2Goals(t *testing.T) {
	row := func(peer string, rate, cpu, rss float64) Row {
		r := Row{Peer: peer, Label: peer + " (locked)", Threading: "locked", Rounds: []Round{{Rate: stats.Num(rate), CPUPerReq: stats.Num(cpu), RSSPerConn: stats.Num(rss)}}}
		r.summarize()
		return r
	}
	h2 := func(id, kind string, load Load, rows ...Row) CaseResult {
		return CaseResult{ID: id, Scenario: Pinned1.ID, Kind: kind, Load: string(load), Rounds: 1, Rows: rows}
	}
	rep := Report{Cases: []CaseResult{
		h2(h2Case, "h2", LoadH2, row("net/http+h2", 40, 25, 0), row("ringloop-h2-adapter-uring", 50, 14, 0), row("ringloop-h2-uring", 90, 8, 0)),
		h2(h2cCase, "h2c", LoadH2, row("net/http-h2c", 40, 20, 0), row("ringloop-h2c-adapter-uring", 70, 16, 0), row("ringloop-h2c-uring", 90, 6, 0)),
		h2(h2IdleCase, "h2", LoadIdle, row("net/http+h2", 0, 0, 40000), row("ringloop-h2-adapter-uring", 0, 0, 8000)),
	}}
	g := Goals(rep)
	require.Contains(t, g, "HTTP/2 goals")
	require.Contains(t, g, "| ringloop-h2-adapter-uring (locked) | 1.25 **missed** | 0.56 met | - | 0.20 met |")
	require.Contains(t, g, "| ringloop-h2c-adapter-uring (locked) | 1.75 met | 0.80 **missed** | - | - |")
	require.Contains(t, g, "| ringloop-h2-uring (locked) | - | - | 0.32 met | - |")
	require.Contains(t, g, "| ringloop-h2c-uring (locked) | - | - | 0.30 met | - |")
	require.NotContains(t, g, "| net/http+h2 |", "only ringloop rows are judged")
}

// The gRPC table reads the adapter's rows against grpc-go's own server.
func TestGRPCGoals(t *testing.T) {
	row := func(peer string, rate, cpu float64) Row {
		r := Row{Peer: peer, Label: peer + " (locked)", Threading: "locked", Rounds: []Round{{Rate: stats.Num(rate), CPUPerReq: stats.Num(cpu)}}}
		r.summarize()
		return r
	}
	rep := Report{Cases: []CaseResult{{ID: grpcCase, Scenario: Pinned1.ID, Kind: "grpc", Load: string(LoadH2), Rounds: 1,
		Rows: []Row{row("grpc-go", 40, 30), row("grpc-go-on-ringloop-uring", 38, 31), row("ringloop-grpc-adapter-uring", 44, 27)}}}}
	g := Goals(rep)
	require.Contains(t, g, "| ringloop-grpc-adapter-uring (locked) | 1.10 met | 0.90 **missed** |")
	require.NotContains(t, g, "grpc-go-on-ringloop", "grpc-go's rows are not judged")
	require.NotContains(t, g, "HTTP/2 goals", "no HTTP/2 case, no HTTP/2 table")
}
