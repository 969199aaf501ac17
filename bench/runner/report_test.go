package runner

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ringloop/ringloop/bench/peers"
	"github.com/ringloop/ringloop/bench/stats"
)

// TLS echo cases get a section of their own, after the scenarios', with
// ratios against net+tls (not the C server), and the headline judges
// netconn's rows against it.
func TestTLSEchoSection(t *testing.T) {
	row := func(peer, mode string, rate float64) Row {
		rd := nanRound()
		rd.Rate = stats.Num(rate)
		r := Row{Peer: peer, Label: peer, Threading: mode, Rounds: []Round{rd}}
		if mode != "" {
			r.Label = peer + " (" + mode + ")"
		}
		r.summarize()
		return r
	}
	rep := Report{Mode: "quick", Machine: map[string]string{}, Scenarios: []Scenario{Pinned1},
		Cases: []CaseResult{
			{ID: "p1-echo-c64-128", Title: "echo, 64 conn, 128 B", Scenario: Pinned1.ID, Kind: string(peers.Echo), Load: "echo", Rounds: 1,
				Rows: []Row{row("ringloop-uring", "parked", 150), row("c-liburing", "", 200), row("net", "", 100)}},
			{ID: "p1-tls-echo-c64-1024", Title: "TLS echo, 64 conn, 1 KiB", Scenario: Pinned1.ID, Kind: string(peers.TLSEcho), Load: "echo", Rounds: 1,
				Rows: []Row{row("net+tls", "", 100), row("netconn+tls", "parked", 110)}},
		}}
	md := Markdown(rep)
	scen := strings.Index(md, "## "+Pinned1.Title)
	own := strings.Index(md, "## TLS echo")
	echo := strings.Index(md, "### echo, 64 conn")
	tlsCase := strings.Index(md, "### TLS echo, 64 conn, 1 KiB")
	require.True(t, scen >= 0 && own > scen && echo > scen && echo < own && tlsCase > own, "echo under its scenario, TLS echo in its own section after it:\n%s", md)
	require.Equal(t, 1, strings.Count(md, "## "+Pinned1.Title+"\n"), "the scenario heading once")
	tlsPart := md[own:]
	require.Contains(t, tlsPart, Pinned1.Title+".", "the TLS case says its scenario")
	require.Contains(t, tlsPart, "| msgs/s | × net+tls |")
	require.Contains(t, tlsPart, "| netconn+tls (parked) | — | parked | — | 110 | 1.10 |")
	require.Contains(t, tlsPart, "| net+tls | — | — | — | 100 | 1.00 |")
	require.Contains(t, md[:own], "| ringloop-uring (parked) | — | parked | — | 150 | 0.75 |", "echo still divides by the C server")
	require.Contains(t, Headline(rep), "- TLS echo, 64 conn, 1 KiB, netconn+tls (parked): 1.10× net+tls\n")
}

// The rest case renders its own table (CPU % of a core, threads, new
// threads, wakeups/s), keeps a failed row's reason, and its figures keep
// their JSON names through a round trip.
func TestRestTable(t *testing.T) {
	rd := nanRound()
	rd.RestCPU, rd.Threads, rd.NewThreads, rd.WakeupsPerS = 0.25, 3, 0, 12.5
	ok := Row{Peer: "ringloop-uring", Label: "ringloop-uring (parked)", Backend: "io_uring", Threading: "parked", Rounds: []Round{rd}}
	bad := Row{Peer: "gnet", Label: "gnet", Error: "1 of 1 rounds failed; round 1: cannot build: no gcc", Rounds: []Round{nanRound()}}
	ok.summarize()
	bad.summarize()
	c := Case{ID: "p1-rest-echo", Kind: peers.Echo, Load: LoadRest, Duration: 10 * time.Second}
	cr := CaseResult{ID: c.ID, Title: c.Title(), Scenario: Pinned1.ID, Kind: "echo", Load: string(LoadRest), Rounds: 1, Rows: []Row{ok, bad}}
	var b strings.Builder
	caseTable(&b, cr)
	md := b.String()
	require.Contains(t, md, "### echo server at rest, no client, 10s (`p1-rest-echo`)")
	require.Contains(t, md, "| peer | backend | threading | CPU % of a core | threads | new threads | wakeups/s |")
	require.Contains(t, md, "| ringloop-uring (parked) | io_uring | parked | 0.25 | 3 | 0 | 12.5 |")
	require.Contains(t, md, "| gnet | — | — | **not run**: cannot build: no gcc | n/a | n/a | n/a |")

	js, err := json.Marshal(ok)
	require.NoError(t, err)
	for _, k := range []string{`"rest_cpu_pct_core":`, `"threads":`, `"new_threads":`, `"vcsw_per_sec":`} {
		require.Contains(t, string(js), k)
	}
	var back Row
	require.NoError(t, json.Unmarshal(js, &back))
	require.Equal(t, stats.Num(12.5), back.Rounds[0].WakeupsPerS)
	require.Equal(t, stats.Num(3), back.Threads.Median)
}
