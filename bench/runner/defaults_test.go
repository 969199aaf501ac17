package runner

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ringloop/ringloop/bench/peers"
	"github.com/ringloop/ringloop/bench/stats"
	"github.com/ringloop/ringloop/engine"
)

var uringLocked = Auto{Backend: "io_uring", Threading: "locked", Reason: "auto: io_uring available"}

// famRow is a measured row of a ringloop family; rate 0 makes it a row
// whose every round failed.
func famRow(auto Auto, peer, family, backend, mode string, rate, cpu float64) Row {
	rd := nanRound()
	r := Row{Peer: peer, Label: peer + " (" + mode + ")", Backend: backend, Threading: mode, Family: family, Default: family != "" && auto.Picks(backend, mode)}
	if rate > 0 {
		rd.Rate, rd.CPUPerReq = stats.Num(rate), stats.Num(cpu)
	} else {
		rd.Err = "server: exit status 2"
		r.Error = "1 of 1 rounds failed; round 1: server: exit status 2"
	}
	r.Rounds = []Round{rd}
	r.summarize()
	return r
}

func otherRow(peer string, rate, cpu float64) Row {
	rd := nanRound()
	rd.Rate, rd.CPUPerReq = stats.Num(rate), stats.Num(cpu)
	r := Row{Peer: peer, Label: peer, Rounds: []Round{rd}}
	r.summarize()
	return r
}

// defaultsReport: an echo case where the default is near the best in
// throughput but not in CPU and one epoll row failed; an HTTP case where
// the adapter's default row failed and net/http on netconn has no io_uring
// row at all; an idle case, which neither comparison reads.
func defaultsReport(auto Auto) Report {
	f := func(peer, family, backend, mode string, rate, cpu float64) Row {
		return famRow(auto, peer, family, backend, mode, rate, cpu)
	}
	return Report{Mode: "quick", Machine: map[string]string{}, Scenarios: []Scenario{Pinned1}, Auto: auto, Cases: []CaseResult{
		{ID: "p1-echo-c64-128", Title: "echo, 64 conn, 128 B", Scenario: Pinned1.ID, Kind: "echo", Load: "echo", Rounds: 1, Rows: []Row{
			f("ringloop-uring", peers.FamilyEcho, "io_uring", "parked", 100, 10),
			f("ringloop-uring", peers.FamilyEcho, "io_uring", "locked", 120, 9),
			f("ringloop-epoll", peers.FamilyEcho, "epoll", "parked", 125, 8),
			f("ringloop-epoll", peers.FamilyEcho, "epoll", "locked", 0, 0),
			otherRow("net", 110, 12),
		}},
		{ID: "p1-http-c50", Title: "HTTP plaintext keep-alive, 50 conn (wrk)", Scenario: Pinned1.ID, Kind: "http", Load: "wrk", Rounds: 1, Rows: []Row{
			f("ringloop-http-uring", peers.FamilyHTTP, "io_uring", "locked", 300, 3),
			f("ringloop-http-epoll", peers.FamilyHTTP, "epoll", "locked", 200, 4),
			f("ringloop-http-adapter-uring", peers.FamilyAdapter, "io_uring", "locked", 0, 0),
			f("ringloop-http-adapter-epoll", peers.FamilyAdapter, "epoll", "locked", 90, 9),
			otherRow("net/http", 100, 10),
			f("net/http-on-ringloop-epoll", peers.FamilyNetHTTP, "epoll", "parked", 80, 11),
		}},
		{ID: "p1-idle-echo-10k", Title: "echo, 10000 idle connections", Scenario: Pinned1.ID, Kind: "echo", Load: "idle", Rounds: 1, Rows: []Row{
			f("ringloop-uring", peers.FamilyEcho, "io_uring", "locked", 0, 0),
		}},
	}}
}

func isNaN(x stats.Num) bool { return math.IsNaN(float64(x)) }

// The default-vs-best builder finds each family's default row and its
// best rows by throughput and by CPU (failed rows left out), and says why
// a ratio is missing: the default row failed, or no row runs the default.
func TestDefaultVsBestRows(t *testing.T) {
	ds := DefaultVsBestRows(defaultsReport(uringLocked))
	require.Len(t, ds, 4, "echo; fast API, adapter, net/http on netconn; the idle case is left out")

	echo := ds[0]
	require.Equal(t, "p1-echo-c64-128", echo.Case)
	require.Equal(t, peers.FamilyEcho, echo.Family)
	require.Equal(t, "ringloop-uring (locked)", echo.Default)
	require.Equal(t, 4, echo.Rows)
	require.Equal(t, 3, echo.Measured)
	require.Equal(t, stats.Num(120), echo.Rate)
	require.Equal(t, "ringloop-epoll (parked)", echo.BestRate)
	require.Equal(t, stats.Num(125), echo.TopRate)
	require.InDelta(t, 0.96, float64(echo.RateRatio), 1e-9)
	require.True(t, echo.RateWithin())
	require.Equal(t, "ringloop-epoll (parked)", echo.BestCPU)
	require.InDelta(t, 9.0/8, float64(echo.CPURatio), 1e-9)
	require.False(t, echo.CPUWithin())
	require.Equal(t, "best of the 3 rows measured (of 4)", echo.Note)

	fast := ds[1]
	require.Equal(t, peers.FamilyHTTP, fast.Family)
	require.InDelta(t, 1, float64(fast.RateRatio), 1e-9, "the default is the best")
	require.InDelta(t, 1, float64(fast.CPURatio), 1e-9)
	require.Empty(t, fast.Note)

	ad := ds[2]
	require.Equal(t, peers.FamilyAdapter, ad.Family)
	require.Equal(t, "ringloop-http-adapter-uring (locked)", ad.Default)
	require.Equal(t, "ringloop-http-adapter-epoll (locked)", ad.BestRate, "the best of what ran")
	require.True(t, isNaN(ad.Rate) && isNaN(ad.RateRatio) && isNaN(ad.CPURatio), "no ratio without the default's figure")
	require.False(t, ad.RateWithin(), "a missing ratio is not within 5%")
	require.False(t, ad.CPUWithin())
	require.Contains(t, ad.Note, "the default row was not measured: 1 of 1 rounds failed")

	nh := ds[3]
	require.Equal(t, peers.FamilyNetHTTP, nh.Family)
	require.Empty(t, nh.Default)
	require.Equal(t, "no row runs the automatic choice", nh.Note)
	require.True(t, isNaN(nh.RateRatio))

	alone := defaultsReport(uringLocked)
	alone.Cases = alone.Cases[:1]
	alone.Cases[0].Rows = []Row{alone.Cases[0].Rows[1]}
	ds = DefaultVsBestRows(alone)
	require.Len(t, ds, 1)
	require.Equal(t, stats.Num(120), ds[0].Rate)
	require.True(t, isNaN(ds[0].RateRatio) && isNaN(ds[0].CPURatio), "a default alone is not compared with itself")
	require.Contains(t, ds[0].Note, "only the default's row runs")

	// A default row whose CPU is under the tick's resolution (0 µs in a
	// short, loaded run) has a rate ratio but no CPU ratio.
	tick := defaultsReport(uringLocked)
	tick.Cases = tick.Cases[:1]
	tick.Cases[0].Rows[1] = famRow(uringLocked, "ringloop-uring", peers.FamilyEcho, "io_uring", "locked", 120, 0)
	ds = DefaultVsBestRows(tick)
	require.InDelta(t, 0.96, float64(ds[0].RateRatio), 1e-9)
	require.True(t, isNaN(ds[0].CPURatio), "no CPU ratio from a 0: %v", ds[0].CPURatio)

	unknown := DefaultVsBestRows(defaultsReport(Auto{Err: "no benchserver"}))
	require.Len(t, unknown, 4)
	for _, d := range unknown {
		require.Empty(t, d.Default)
		require.Equal(t, "the automatic choice is unknown", d.Note)
	}
}

// The backend builder pairs each family's io_uring and epoll rows mode by
// mode, and says which side is missing or failed.
func TestUringVsEpollRows(t *testing.T) {
	ps := UringVsEpollRows(defaultsReport(uringLocked))
	type key struct{ c, f, m string }
	got := map[key]BackendPair{}
	for _, p := range ps {
		got[key{p.Case, p.Family, p.Threading}] = p
	}
	require.Len(t, got, len(ps), "one entry per case, family and mode")
	require.Len(t, ps, 5)

	p := got[key{"p1-echo-c64-128", peers.FamilyEcho, "parked"}]
	require.InDelta(t, 0.8, float64(p.RateRatio), 1e-9)
	require.InDelta(t, 1.25, float64(p.CPURatio), 1e-9)
	require.Empty(t, p.Note)

	p = got[key{"p1-echo-c64-128", peers.FamilyEcho, "locked"}]
	require.Equal(t, stats.Num(120), p.URingRate)
	require.True(t, isNaN(p.EpollRate) && isNaN(p.RateRatio) && isNaN(p.CPURatio))
	require.Contains(t, p.Note, "epoll not measured: 1 of 1 rounds failed")

	p = got[key{"p1-http-c50", peers.FamilyHTTP, "locked"}]
	require.InDelta(t, 1.5, float64(p.RateRatio), 1e-9)
	require.InDelta(t, 0.75, float64(p.CPURatio), 1e-9)

	p = got[key{"p1-http-c50", peers.FamilyAdapter, "locked"}]
	require.Contains(t, p.Note, "io_uring not measured")
	require.Equal(t, stats.Num(90), p.EpollRate)

	p = got[key{"p1-http-c50", peers.FamilyNetHTTP, "parked"}]
	require.Equal(t, "no io_uring row", p.Note)
	require.True(t, isNaN(p.RateRatio))
}

// The report marks the default rows, renders both comparisons with their
// verdicts and reasons, and keeps them in the JSON (missing ratios as null).
func TestDefaultComparisonsInReport(t *testing.T) {
	rep := defaultsReport(uringLocked)
	md := Markdown(rep)
	require.Contains(t, md, "## "+DefaultVsBestTitle+"\n")
	require.Contains(t, md, "## "+UringVsEpollTitle+"\n")
	require.Contains(t, md, "The automatic default here: io_uring, locked (auto: io_uring available)")
	require.Contains(t, md, "Within 5% of the best: throughput in 2 of 2, CPU per request in 1 of 2 (family × case).")
	require.Contains(t, md, "| p1-echo-c64-128 | echo | ringloop-uring (locked) | 120 | ringloop-epoll (parked) | 125 | 0.96 within 5% | 9.00 | ringloop-epoll (parked) | 8.00 | 1.12 **not within 5%** |")
	require.Contains(t, md, "| p1-http-c50 | http.Handler adapter | ringloop-http-adapter-uring (locked): the default row was not measured: 1 of 1 rounds failed; round 1: server: exit status 2 | n/a |")
	require.Contains(t, md, "| p1-http-c50 | net/http on netconn | —: no row runs the automatic choice | n/a | net/http-on-ringloop-epoll (parked) | 80 | n/a |")
	require.Contains(t, md, "p1-echo-c64-128, echo: best of the 3 rows measured (of 4).")
	require.Contains(t, md, "io_uring at least epoll's throughput in 1 of 2, at most its CPU per request in 1 of 2.")
	require.Contains(t, md, "| p1-echo-c64-128 | echo | parked | 100 | 125 | 0.80 | 10.00 | 8.00 | 1.25 |")
	require.Contains(t, md, "| p1-echo-c64-128 | echo | locked | 120 | n/a | epoll not measured: 1 of 1 rounds failed; round 1: server: exit status 2 | 9.00 | n/a | n/a |")
	require.Contains(t, md, "| ringloop-uring (locked) [default] | io_uring | locked |", "the case table marks the default row")
	require.NotContains(t, md, "| ringloop-uring (parked) [default]")
	require.Contains(t, Headline(rep), "ringloop-uring (locked) [default]: 1.09× net")
	require.Less(t, strings.Index(md, DefaultVsBestTitle), strings.Index(md, "## "+Pinned1.Title), "the comparisons come before the case tables")

	rep.DefaultVsBest, rep.UringVsEpoll = DefaultVsBestRows(rep), UringVsEpollRows(rep)
	js, err := json.Marshal(rep)
	require.NoError(t, err)
	require.Contains(t, string(js), `"ringloop_auto":{"backend":"io_uring","threading":"locked","reason":"auto: io_uring available"}`)
	require.Contains(t, string(js), `"rate_ratio":null`)
	var back Report
	require.NoError(t, json.Unmarshal(js, &back))
	require.Len(t, back.DefaultVsBest, 4)
	require.Equal(t, "ringloop-uring (locked)", back.DefaultVsBest[0].Default)
	require.True(t, isNaN(back.DefaultVsBest[2].RateRatio))
	require.True(t, back.Cases[0].Rows[1].Default)
	require.Equal(t, peers.FamilyEcho, back.Cases[0].Rows[1].Family)

	require.Empty(t, DefaultVsBestTable(Report{Cases: []CaseResult{{ID: "x", Load: "echo", Rows: []Row{otherRow("net", 1, 1)}}}}), "no ringloop family, no table")
}

// A case may keep only the automatic choice's row of some peers (the demo's
// adapter row); the runner marks each family's default row before it runs.
func TestAutoOnlyAndDefaultRow(t *testing.T) {
	r := New(Config{Root: "..", Bin: t.TempDir()})
	r.Auto = uringLocked
	c := Case{ID: "demo-http", Kind: peers.HTTP, Load: LoadWrk,
		Only:     []string{"ringloop-http-uring", "ringloop-http-adapter-uring", "ringloop-http-adapter-epoll", "net/http"},
		AutoOnly: []string{"ringloop-http-adapter-uring", "ringloop-http-adapter-epoll"}}
	var labels []string
	var defaults []string
	for _, v := range r.caseVariants(c) {
		labels = append(labels, v.label)
		if row := r.newRow(v); row.Default {
			defaults = append(defaults, row.Label)
			require.Equal(t, "io_uring", row.Backend)
		}
	}
	require.Equal(t, []string{"ringloop-http-uring (parked)", "ringloop-http-uring (locked)", "ringloop-http-adapter-uring (locked)", "net/http"}, labels)
	require.Equal(t, []string{"ringloop-http-uring (locked)", "ringloop-http-adapter-uring (locked)"}, defaults)

	r.Auto = Auto{Backend: "epoll", Threading: "parked"}
	labels = nil
	for _, v := range r.caseVariants(c) {
		labels = append(labels, v.label)
	}
	require.Equal(t, []string{"ringloop-http-uring (parked)", "ringloop-http-uring (locked)", "ringloop-http-adapter-epoll (parked)", "net/http"}, labels)

	r.Auto = Auto{Err: "unknown"}
	labels = nil
	for _, v := range r.caseVariants(c) {
		labels = append(labels, v.label)
	}
	require.Equal(t, []string{"ringloop-http-uring (parked)", "ringloop-http-uring (locked)", "net/http"}, labels, "no known default, no AutoOnly row")
}

// The suites stay within their time budgets as estimated (arithmetic over
// the cases and the registered peers, not a measurement): a row added to
// every case of the sweep shows here first. The full sweep's budget grew
// from 40 to 42 minutes with the TLS handshake and idle TLS cases, and to
// 46 with five rounds (not one) of the system-call and WebSocket broadcast
// cases, whose single round ranged 3× and more across the kept sweeps,
// and to 50 with the four UDP echo cases (7 rows × 5 rounds each, ~4 min),
// and to 60 with the HTTP/2 and gRPC cases (h2load's rounds are 10 s: ~9
// min) and room for the DNS case. The smoke run's grew from 3 to 3.5
// minutes with the 15 HTTP/2 and gRPC servers (each its own process).
func TestSuiteBudgets(t *testing.T) {
	r := New(Config{Root: "..", Bin: t.TempDir()})
	r.Auto = uringLocked
	for _, tc := range []struct {
		mode Mode
		max  time.Duration
	}{{Quick, 5 * time.Minute}, {Full, 65 * time.Minute}, {Smoke, 210 * time.Second}} {
		cs, err := Suite(tc.mode)
		require.NoError(t, err)
		est := r.Estimate(cs)
		require.Positive(t, est)
		require.LessOrEqual(t, est, tc.max, "%s suite: about %v", tc.mode, est)
	}
}

// A BackendDefault case runs each ringloop family in its backends' default
// threading mode only, and every other peer as it is.
func TestBackendDefaultVariants(t *testing.T) {
	r := New(Config{Auto: Auto{Backend: "io_uring", Threading: peers.DefaultThreading(engine.BackendUring), Reason: "test"}})
	all := r.caseVariants(Case{Kind: peers.TLSEcho})
	some := r.caseVariants(Case{Kind: peers.TLSEcho, BackendDefault: true})
	require.Less(t, len(some), len(all), "fewer rows")
	seen := map[string]bool{}
	for _, v := range some {
		seen[v.peer.Name] = true
		if v.peer.Family == "" {
			require.Empty(t, v.mode, v.label)
			continue
		}
		var b engine.Backend
		require.NoError(t, b.UnmarshalText([]byte(v.peer.Backend)))
		require.Equal(t, peers.DefaultThreading(b), v.mode, v.label)
	}
	for _, v := range all {
		require.True(t, seen[v.peer.Name], "%s keeps a row", v.peer.Name)
	}
}
