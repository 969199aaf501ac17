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

// The handshake and idle TLS cases go into the TLS section: handshakes
// per second and costs per handshake, RSS per idle connection, each with
// its ratio to net+tls; the TLS goals table judges the looptls rows.
func TestTLSHandshakeAndIdleTables(t *testing.T) {
	row := func(peer, mode string, f func(*Round)) Row {
		rd := nanRound()
		f(&rd)
		r := Row{Peer: peer, Label: peer, Threading: mode, Rounds: []Round{rd}}
		if mode != "" {
			r.Label = peer + " (" + mode + ")"
		}
		r.summarize()
		return r
	}
	hs := func(rate, cpu float64) func(*Round) {
		return func(r *Round) { r.Rate, r.CPUPerReq = stats.Num(rate), stats.Num(cpu) }
	}
	rss := func(b float64) func(*Round) { return func(r *Round) { r.RSSPerConn = stats.Num(b) } }
	hsCase := Case{ID: "p1-tls-handshake-c16", Kind: peers.TLSEcho, Load: LoadHandshake, Conns: 16, Size: 32}
	idleCase := Case{ID: "p1-tls-idle-10k", Kind: peers.TLSEcho, Load: LoadIdle, Conns: 10000}
	rep := Report{Mode: "full", Machine: map[string]string{}, Scenarios: []Scenario{Pinned1},
		Cases: []CaseResult{
			{ID: hsCase.ID, Title: hsCase.Title(), Scenario: Pinned1.ID, Kind: string(peers.TLSEcho), Load: string(LoadHandshake), Rounds: 1,
				Rows: []Row{row("net+tls", "", hs(1000, 400)), row("looptls-uring", "parked", hs(1100, 380)), row("looptls-epoll", "parked", hs(900, 420))}},
			{ID: idleCase.ID, Title: idleCase.Title(), Scenario: Pinned1.ID, Kind: string(peers.TLSEcho), Load: string(LoadIdle), Rounds: 1,
				Rows: []Row{row("net+tls", "", rss(40000)), row("looptls-uring", "parked", rss(8000)), row("looptls-epoll", "parked", rss(16000))}},
		}}
	md := Markdown(rep)
	own := strings.Index(md, "## TLS echo")
	require.Positive(t, own, md)
	tlsPart := md[own:]
	require.Contains(t, tlsPart, "### TLS 1.3 full handshakes, 16 dialers (handshake, 32 B echoed, close) (`p1-tls-handshake-c16`)")
	require.Contains(t, tlsPart, "| handshakes/s | × net+tls | p50 µs | p99 µs | p99.9 µs | CPU µs/hs | vcsw/hs | ivcsw/hs | allocs/hs |")
	require.Contains(t, tlsPart, "| looptls-uring (parked) | — | parked | — | 1,100 | 1.10 | n/a | n/a | n/a | 380.00 |")
	require.Contains(t, tlsPart, "### TLS echo, 10000 idle connections (full handshake and one echo each) (`p1-tls-idle-10k`)")
	require.Contains(t, tlsPart, "| peer | backend | threading | RSS per idle connection | × net+tls |")
	require.Contains(t, tlsPart, "| looptls-epoll (parked) | — | parked | 16.00 KB | 0.40 |")
	require.Contains(t, tlsPart, "| net+tls | — | — | 40.00 KB | 1.00 |")

	g := Goals(rep)
	require.Contains(t, g, "TLS on the loop goals")
	require.Contains(t, g, "| server | full handshakes/s ÷ net+tls (≥ 0.95) | RSS per idle TLS conn ÷ net+tls (≤ 0.25) |")
	require.Contains(t, g, "| looptls-uring (parked) | 1.10 met | 0.20 met |")
	require.Contains(t, g, "| looptls-epoll (parked) | 0.90 **missed** | 0.40 **missed** |")
	require.NotContains(t, g, "| net+tls |", "only looptls rows are judged")
}
