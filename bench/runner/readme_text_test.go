package runner

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ringloop/ringloop/bench/peers"
	"github.com/ringloop/ringloop/bench/stats"
)

// rateRow is a row of one round per rate given.
func rateRow(peer, family string, def bool, rates ...float64) Row {
	r := Row{Peer: peer, Label: peer, Family: family, Default: def}
	for _, x := range rates {
		rd := nanRound()
		rd.Rate, rd.CPUPerReq = stats.Num(x), 10
		r.Rounds = append(r.Rounds, rd)
	}
	r.summarize()
	return r
}

// The headline names every peer that is not ringloop's, gnet-http included,
// and a peer without a figure stays in the line with the reason.
func TestHeadlineNamesEveryPeer(t *testing.T) {
	failed := Row{Peer: "fasthttp", Label: "fasthttp", Error: "1 of 1 rounds failed; round 1: wrk: connection refused", Rounds: []Round{nanRound()}}
	failed.summarize()
	rep := Report{Cases: []CaseResult{{ID: "p1-http-c256-p16", Title: "HTTP pipelined", Scenario: Pinned1.ID, Kind: string(peers.HTTP), Load: string(LoadWrk),
		Rows: []Row{rateRow("ringloop-http-adapter-uring", peers.FamilyAdapter, true, 80), rateRow("gnet-http", "", false, 1000), failed, rateRow("net/http", "", false, 50)}}}}
	h := Headline(rep)
	require.Contains(t, h, "- HTTP pipelined, ringloop-http-adapter-uring [default]: 1.60× net/http, 0.08× gnet-http, fasthttp not measured (wrk: connection refused)\n",
		"the baseline first, then every other peer in the case's order")
}

// A loss is called one: fewer at more CPU, whatever the margins.
func TestVerdict(t *testing.T) {
	for _, c := range []struct {
		rate, cpu float64
		want      string
	}{
		{0.86, 1.08, "a loss"}, {1.42, 0.61, "a win"}, {0.99, 0.87, "slower and cheaper"}, {1.2, 1.1, "faster and costlier"},
		{1.001, 1.08, "a loss"}, {0.999, 0.999, "level"}, {1.0, 0.9, "a win"},
	} {
		require.Equal(t, c.want, verdict(c.rate, c.cpu), "rate %.3f cpu %.3f", c.rate, c.cpu)
	}
}

// A sweep where another configuration leads the default on every score is
// reported as a loss, never a tie; a split says on which scores.
func TestSweepVerdict(t *testing.T) {
	def := ConfigScore{Backend: "io_uring", Threading: "parked", Default: true, RateWithin: 23, GeoRate: 0.940, GeoCPU: 1.069}
	other := ConfigScore{Backend: "epoll", Threading: "parked", RateWithin: 26, GeoRate: 0.945, GeoCPU: 1.058}
	locked := ConfigScore{Backend: "io_uring", Threading: "locked", RateWithin: 17, GeoRate: 0.847, GeoCPU: 1.169}
	led, text := sweepVerdict(Report{ConfigScores: []ConfigScore{def, other, locked}})
	require.False(t, led)
	require.Equal(t, "epoll parked led it on all three (a loss)", text)
	require.NotContains(t, text, "tie")

	other.GeoRate, other.RateWithin = 0.940, 18
	led, text = sweepVerdict(Report{ConfigScores: []ConfigScore{def, other, locked}})
	require.False(t, led)
	require.Equal(t, "against epoll parked it was ahead on groups within 5%, level on throughput, behind on CPU (split)", text)

	other.GeoCPU = 1.2
	led, text = sweepVerdict(Report{ConfigScores: []ConfigScore{def, other, locked}})
	require.False(t, led, "level on one score is not a lead")
	require.Equal(t, "against epoll parked it was ahead on groups within 5% and CPU, level on throughput (split)", text)
	other.GeoRate = 0.9
	led, text = sweepVerdict(Report{ConfigScores: []ConfigScore{def, other, locked}})
	require.True(t, led, text)
}

// The broadcast paragraph shows the rounds behind its ratio and how the
// round-by-round ratios ranged; one round says so.
func TestWebSocketParagraphShowsRounds(t *testing.T) {
	rep := Report{Date: "2026-11-28 10:00 UTC", Auto: Auto{Backend: "io_uring", Threading: "parked"}, Cases: []CaseResult{
		{ID: "p1-ws-bcast-10k-128", Kind: string(peers.WebSocket), Load: string(LoadBcast), Rounds: 3, Rows: []Row{
			rateRow("ringloop-ws-uring", peers.FamilyWebSocket, true, 1.8e6, 1.6e6, 2.0e6), rateRow("gorilla", "", false, 60000, 80000, 100000)}},
	}}
	p := WebSocketParagraph(rep, nil)
	require.Contains(t, p, "delivers 22.50× as many messages a second (1,800,000 (1,600,000–2,000,000) against 80,000 (60,000–100,000) deliveries/s, over 3 rounds (round by round 20.00×–30.00×))")
	rep.Cases[0].Rounds = 1
	rep.Cases[0].Rows = []Row{rateRow("ringloop-ws-uring", peers.FamilyWebSocket, true, 1.8e6), rateRow("gorilla", "", false, 70000)}
	require.Contains(t, WebSocketParagraph(rep, nil), "over one round")
}

// Write keeps each sweep's JSON in history under its date, byte for byte,
// and rendering the same report again leaves that record alone.
func TestWriteKeepsHistory(t *testing.T) {
	dir := t.TempDir()
	rep := Report{Date: "2026-11-28 09:05 UTC", Mode: "quick", Machine: map[string]string{}}
	_, err := Write(dir, rep)
	require.NoError(t, err)
	kept := filepath.Join(dir, HistoryDir, "2026-11-28T0905Z.json")
	a, err := os.ReadFile(filepath.Join(dir, "latest.json"))
	require.NoError(t, err)
	b, err := os.ReadFile(kept)
	require.NoError(t, err)
	require.Equal(t, a, b)

	rep.Command = "re-rendered"
	_, err = Write(dir, rep)
	require.NoError(t, err)
	b, err = os.ReadFile(kept)
	require.NoError(t, err)
	require.Equal(t, a, b, "the record of a sweep is not rewritten")

	_, err = Write(dir, Report{Date: "yesterday"})
	require.ErrorContains(t, err, `report date "yesterday"`)

	hist, err := ReadHistory(filepath.Join(dir, HistoryDir))
	require.NoError(t, err)
	require.Len(t, hist, 1)
	require.Empty(t, hist[0].Command)
}

// The engine doc paragraph is wrapped Go comment and replaces exactly the
// paragraph it names.
func TestReplaceDocPassage(t *testing.T) {
	src := "// Package x.\n//\n" + docPassageStart + " old\n// words.\n//\n// Next.\npackage x\n"
	out, err := ReplaceDocPassage(src, wrapComment(strings.TrimPrefix(docPassageStart, "// ")+" new words", 77))
	require.NoError(t, err)
	require.Equal(t, "// Package x.\n//\n"+docPassageStart+" new words\n//\n// Next.\npackage x\n", out)
	for line := range strings.Lines(wrapComment(strings.Repeat("word ", 100), 77)) {
		require.LessOrEqual(t, len(strings.TrimSuffix(line, "\n")), 77)
	}
	_, err = ReplaceDocPassage("package x\n", "x")
	require.Error(t, err)
}
