package runner

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestReplaceSection(t *testing.T) {
	b, e := BeginMarker("bench"), EndMarker("bench")
	doc := "# x\n\n## Measured\n\n" + b + "\nold figures\n" + e + "\n\n## Next\n"
	out, err := ReplaceSection(doc, "bench", "new figures\n")
	require.NoError(t, err)
	require.Contains(t, out, b+"\n\nnew figures\n\n"+e)
	require.NotContains(t, out, "old figures")
	require.True(t, strings.HasSuffix(out, "## Next\n"))
	again, err := ReplaceSection(out, "bench", "new figures")
	require.NoError(t, err)
	require.Equal(t, out, again, "regenerating is idempotent")
	got, err := Section(out, "bench")
	require.NoError(t, err)
	require.Equal(t, "\n\nnew figures\n\n", got)

	_, err = ReplaceSection("no markers", "bench", "x")
	require.Error(t, err)
	_, err = ReplaceSection(e+b, "bench", "x")
	require.Error(t, err)
	_, err = ReplaceSection(doc+doc, "bench", "x")
	require.Error(t, err, "a section twice is refused: which one is generated?")
	_, err = ReplaceSection(doc, "bench-default", "x")
	require.Error(t, err, "markers are matched by name")
}

// A report survives its JSON round trip (missing figures included) and the
// README section quotes the default row against each peer, with failures.
func TestREADMESectionFromJSON(t *testing.T) {
	rows := []Row{
		{Peer: "ringloop-uring", Label: "ringloop-uring (parked)", Backend: "io_uring", Threading: "parked", Family: "echo", Default: true, Rounds: []Round{{Rate: 900, P50: 50, P99: 90, CPUPerReq: 3}}},
		{Peer: "ringloop-uring", Label: "ringloop-uring (locked)", Backend: "io_uring", Threading: "locked", Family: "echo", Rounds: []Round{{Rate: 950, P50: 50, P99: 90, CPUPerReq: 3}}},
		{Peer: "c-liburing", Label: "c-liburing", Backend: "io_uring", Rounds: []Round{{Rate: 1000, P50: 40, P99: 80, CPUPerReq: 4}}},
		{Peer: "gnet", Label: "gnet", Error: "1 of 1 rounds failed; round 1: cannot build: no gcc", Rounds: []Round{nanRound()}},
	}
	for i := range rows {
		rows[i].summarize()
	}
	rep := Report{Date: "2026-11-23 09:00 UTC", Command: "make bench-quick", Mode: "quick", Machine: map[string]string{"cpus": "2"},
		Auto:      Auto{Backend: "io_uring", Threading: "parked"},
		Scenarios: []Scenario{Pinned1},
		Cases: []CaseResult{
			{ID: "p1-echo-c64-128", Title: "echo, 64 conn, 128 B", Scenario: Pinned1.ID, Kind: "echo", Load: "echo", Rounds: 1, Rows: rows},
			{ID: "p1-idle-echo-10k", Title: "idle", Scenario: Pinned1.ID, Kind: "echo", Load: string(LoadIdle), Rounds: 1, Rows: rows},
		}}
	b, err := json.Marshal(rep)
	require.NoError(t, err)
	var back Report
	require.NoError(t, json.Unmarshal(b, &back))
	s := READMESection(back)
	require.Contains(t, s, "make bench-quick")
	require.Contains(t, s, "| echo, 64 conn, 128 B (pinned, GOMAXPROCS=1) | echo | 900 | 0.90× c-liburing, gnet not measured (cannot build: no gcc) | 3.00 | 0.75 (c-liburing) |",
		"a peer without a figure stays in the row and says why")
	require.NotContains(t, s, "(locked)", "only the default row is quoted")
	require.NotContains(t, s, "| idle", "cases without a rate are left to the full report")
	require.Contains(t, s, "bench/results/latest.md")
}
