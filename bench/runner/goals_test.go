package runner

import (
	"testing"

	"github.com/ringloop/ringloop/bench/stats"
	"github.com/stretchr/testify/require"
)

// The goals table reads each ringloop row against the right peers and
// cases, says which bounds are met and which missed, and is absent when no
// goal can be read.
func TestGoals(t *testing.T) {
	row := func(peer, mode string, rate, p50, cpu float64) Row {
		r := Row{Peer: peer, Label: peer, Threading: mode, Rounds: []Round{{Rate: stats.Num(rate), P50: stats.Num(p50), CPUPerReq: stats.Num(cpu)}}}
		if mode != "" {
			r.Label = peer + " (" + mode + ")"
		}
		r.summarize()
		return r
	}
	echo := func(id string, rows ...Row) CaseResult {
		return CaseResult{ID: id, Scenario: Pinned1.ID, Kind: "echo", Load: "echo", Rounds: 1, Rows: rows}
	}
	rep := Report{Cases: []CaseResult{
		echo("p1-echo-c1-128", row("ringloop-uring", "parked", 10, 45, 50), row("ringloop-uring", "locked", 10, 40, 60), row("net", "", 10, 50, 60), row("c-liburing", "", 10, 40, 48)),
		echo("p1-echo-c64-128", row("ringloop-uring", "parked", 130, 0, 40), row("ringloop-uring", "locked", 120, 0, 40), row("net", "", 100, 0, 60), row("gnet", "", 104, 0, 50), row("c-liburing", "", 150, 0, 40)),
		echo("p2-echo-c64-128", row("ringloop-uring", "parked", 120, 0, 40), row("ringloop-uring", "locked", 120, 0, 40)),
	}}
	restRow := func(peer, mode string, cpu, newThreads float64) Row {
		r := Row{Peer: peer, Label: peer + " (" + mode + ")", Threading: mode, Rounds: []Round{{RestCPU: stats.Num(cpu), Threads: 3, NewThreads: stats.Num(newThreads)}}}
		r.summarize()
		return r
	}
	rep.Cases = append(rep.Cases, CaseResult{ID: "p1-rest-echo", Scenario: Pinned1.ID, Kind: "echo", Load: string(LoadRest), Rounds: 1,
		Rows: []Row{restRow("ringloop-uring", "parked", 0.1, 0), restRow("ringloop-uring", "locked", 0.5, 1)}})
	g := Goals(rep)
	require.Contains(t, g, "idle loop CPU % of a core (< 0.5) | new threads (= 0) |")
	require.Contains(t, g, "| ringloop-uring (parked) | n/a | 0.90 met | 1.04 met | 1.25 met | n/a | 1.00 met | 0.92 **missed** | n/a | 0.10 met | 0 met |")
	require.Contains(t, g, "| ringloop-uring (locked) | n/a | 0.80 met | 1.25 **missed** | 1.15 **missed** | n/a | 1.00 met | 1.00 met | n/a | 0.50 **missed** | 1 **missed** |")
	require.NotContains(t, g, "| net |", "only ringloop rows are judged")
	require.NotContains(t, g, "HTTP server goals", "no HTTP case, no HTTP table")
	require.Empty(t, Goals(Report{Cases: []CaseResult{echo("other", row("ringloop-uring", "parked", 1, 1, 1))}}))
}

// The HTTP table judges the fast API and the adapter each by its own
// bounds, and marks the goals that are not a server's with "-".
func TestHTTPGoals(t *testing.T) {
	row := func(peer string, rate, p99, allocs float64) Row {
		r := Row{Peer: peer, Label: peer + " (parked)", Threading: "parked", Rounds: []Round{{Rate: stats.Num(rate), P99: stats.Num(p99), Allocs: stats.Num(allocs)}}}
		r.summarize()
		return r
	}
	wrk := func(id string, load Load, rows ...Row) CaseResult {
		return CaseResult{ID: id, Scenario: Pinned1.ID, Kind: "http", Load: string(load), Rounds: 1, Rows: rows}
	}
	rep := Report{Cases: []CaseResult{
		wrk("p1-http-c50", LoadWrk, row("ringloop-http-uring", 90, 0, 0), row("ringloop-http-adapter-uring", 40, 0, 3), row("net/http", 30, 0, 12), row("fasthttp", 60, 0, 0)),
		wrk("p1-http-c256-p16", LoadWrk, row("ringloop-http-uring", 300, 0, 0), row("fasthttp", 200, 0, 0)),
		wrk("p1-open-c50-70", LoadOpenLoop, row("ringloop-http-uring", 0, 100, 0), row("ringloop-http-adapter-uring", 0, 400, 0), row("net/http", 0, 600, 0)),
	}}
	g := Goals(rep)
	require.Contains(t, g, "| ringloop-http-uring (parked) | 3.00 met | - | 1.50 met | 1.50 met | 0.17 met | 0.00 met |")
	require.Contains(t, g, "| ringloop-http-adapter-uring (parked) | - | 1.33 **missed** | - | - | 0.67 **missed** | - |")
	require.NotContains(t, g, "Wait/wake goals")
}
