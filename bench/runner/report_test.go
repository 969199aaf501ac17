package runner

import (
	"strings"
	"testing"

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
