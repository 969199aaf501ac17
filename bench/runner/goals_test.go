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
	g := Goals(rep)
	require.Contains(t, g, "| ringloop-uring (parked) | n/a | 0.90 met | 1.04 met | 1.25 met | n/a | 1.00 met | 0.92 **missed** | n/a |")
	require.Contains(t, g, "| ringloop-uring (locked) | n/a | 0.80 met | 1.25 **missed** | 1.15 **missed** | n/a | 1.00 met | 1.00 met | n/a |")
	require.NotContains(t, g, "| net |", "only ringloop rows are judged")
	require.Empty(t, Goals(Report{Cases: []CaseResult{echo("other", row("ringloop-uring", "parked", 1, 1, 1))}}))
}
