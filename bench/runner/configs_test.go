package runner

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ringloop/ringloop/bench/peers"
)

// TestConfigScores: each configuration is scored on the groups where every
// configuration of the family has figures, against that group's best.
func TestConfigScores(t *testing.T) {
	auto := Auto{Backend: "io_uring", Threading: "parked", Reason: "auto: io_uring available"}
	f := func(family, backend, mode string, rate, cpu float64) Row {
		return famRow(auto, "ringloop-"+backend, family, backend, mode, rate, cpu)
	}
	rep := Report{Mode: "quick", Machine: map[string]string{}, Scenarios: []Scenario{Pinned1}, Auto: auto, Cases: []CaseResult{
		{ID: "a", Load: "echo", Scenario: Pinned1.ID, Rows: []Row{
			f(peers.FamilyEcho, "io_uring", "parked", 100, 10),
			f(peers.FamilyEcho, "epoll", "parked", 80, 8),
			otherRow("net", 500, 1), // not a family row: never the best
		}},
		{ID: "b", Load: "echo", Scenario: Pinned1.ID, Rows: []Row{
			f(peers.FamilyEcho, "io_uring", "parked", 50, 10),
			f(peers.FamilyEcho, "epoll", "parked", 100, 10.2),
		}},
		{ID: "c", Load: "echo", Scenario: Pinned1.ID, Rows: []Row{ // epoll failed: not scored
			f(peers.FamilyEcho, "io_uring", "parked", 100, 10),
			f(peers.FamilyEcho, "epoll", "parked", 0, 0),
		}},
		{ID: "d", Load: "idle", Scenario: Pinned1.ID, Rows: []Row{ // not a throughput case
			f(peers.FamilyEcho, "io_uring", "parked", 1, 1),
			f(peers.FamilyEcho, "epoll", "parked", 9, 1),
		}},
	}}
	ss := ConfigScores(rep)
	require.Len(t, ss, 2)
	ep, ur := ss[0], ss[1]
	require.Equal(t, "epoll", ep.Backend)
	require.Equal(t, "io_uring", ur.Backend)
	require.True(t, ur.Default)
	require.False(t, ep.Default)
	require.Equal(t, 2, ur.Compared)
	require.Equal(t, 2, ep.Compared)
	// io_uring: a: rate 1, CPU 10/8; b: rate 0.5, CPU 1.
	require.Equal(t, 1, ur.RateWithin)
	require.Equal(t, 1, ur.CPUWithin)
	require.Equal(t, 0, ur.BothWithin)
	require.InDelta(t, math.Sqrt(0.5), float64(ur.GeoRate), 1e-9)
	require.InDelta(t, math.Sqrt(1.25), float64(ur.GeoCPU), 1e-9)
	require.InDelta(t, 0.5, float64(ur.WorstRate), 1e-9)
	require.Equal(t, "b, "+peers.FamilyEcho, ur.WorstCase)
	// epoll: a: rate 0.8, CPU 1; b: rate 1, CPU 1.02.
	require.Equal(t, 1, ep.RateWithin)
	require.Equal(t, 2, ep.CPUWithin)
	require.Equal(t, 1, ep.BothWithin)
	require.InDelta(t, 0.8, float64(ep.WorstRate), 1e-9)

	md := ConfigScoresTable(rep)
	require.Contains(t, md, "| io_uring, parked [default] | 2 | 1 | 1 | 0 | 1 | 0.707 | 1.118 | 0.50 (b, "+peers.FamilyEcho+") |")
	require.Contains(t, md, "| epoll, parked | 2 | 1 | 2 | 1 | 1 | 0.894 | 1.010 | 0.80 (a, "+peers.FamilyEcho+") |")

	one := Report{Cases: rep.Cases[:1]}
	one.Cases = []CaseResult{{ID: "a", Load: "echo", Rows: []Row{f(peers.FamilyEcho, "io_uring", "parked", 100, 10)}}}
	require.Empty(t, ConfigScores(one), "one configuration: nothing to score")
	require.Empty(t, ConfigScoresTable(one))
}

// TestReadReport: a report written and read back renders the same tables,
// its comparisons derived again from the rows.
func TestReadReport(t *testing.T) {
	rep := defaultsReport(uringLocked)
	rep.DefaultVsBest, rep.UringVsEpoll, rep.ConfigScores = DefaultVsBestRows(rep), UringVsEpollRows(rep), ConfigScores(rep)
	rep.Date = "2026-11-28 09:00 UTC" // Write keeps the sweep in history under its date
	dir := t.TempDir()
	md, err := Write(dir, rep)
	require.NoError(t, err)
	back, err := ReadReport(filepath.Join(dir, "latest.json"))
	require.NoError(t, err)
	require.Equal(t, md, Markdown(back))
	require.Contains(t, md, "## "+ConfigScoresTitle+"\n")
	want, err := json.Marshal(rep.ConfigScores) // NaN figures are null
	require.NoError(t, err)
	got, err := json.Marshal(back.ConfigScores)
	require.NoError(t, err)
	require.JSONEq(t, string(want), string(got))

	require.NoError(t, os.WriteFile(filepath.Join(dir, "bad.json"), []byte("{"), 0o644))
	_, err = ReadReport(filepath.Join(dir, "bad.json"))
	require.ErrorContains(t, err, "bad.json")
}
