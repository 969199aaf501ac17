package runner

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ringloop/ringloop/bench/peers"
	"github.com/ringloop/ringloop/bench/stats"
)

// UDP echo cases get a section of their own with ratios against
// net.UDPConn, CPU per datagram against it and the C loop, the loss
// columns, and a goals table.
func TestUDPSection(t *testing.T) {
	row := func(peer, mode string, rate, cpu, lost float64) Row {
		rd := nanRound()
		rd.Rate, rd.CPUPerReq, rd.Lost, rd.RcvbufErrors = stats.Num(rate), stats.Num(cpu), stats.Num(lost), 0
		r := Row{Peer: peer, Label: peer, Threading: mode, Rounds: []Round{rd}}
		if mode != "" {
			r.Label = peer + " (" + mode + ")"
		}
		r.summarize()
		return r
	}
	c := Case{ID: "p1-udp-c64-64", Scenario: Pinned1, Kind: peers.UDPEcho, Load: LoadUDP, Conns: 64, InFlight: 8, Size: 64}
	rep := Report{Mode: "quick", Machine: map[string]string{}, Scenarios: []Scenario{Pinned1},
		Cases: []CaseResult{{ID: c.ID, Title: c.Title(), Scenario: Pinned1.ID, Kind: string(c.Kind), Load: string(c.Load), Rounds: 1,
			Rows: []Row{row("ringloop-udp-uring", "parked", 200000, 3, 0), row("c-mmsg", "", 250000, 4, 0), row("net-udp", "", 100000, 6, 2)}}}}
	md := Markdown(rep)
	own := strings.Index(md, "## UDP echo")
	require.Positive(t, own, md)
	part := md[own:]
	require.Contains(t, part, "### UDP echo, 64 client sockets × 8 in flight, 64 B (`p1-udp-c64-64`)")
	require.Contains(t, part, "| datagrams/s | × net-udp | p50 µs | p99 µs | CPU µs/dgram | CPU × net-udp | CPU × c-mmsg | lost | RcvbufErrors |")
	require.Contains(t, part, "| ringloop-udp-uring (parked) | — | parked | — | 200,000 | 2.00 | n/a | n/a | 3.00 | 0.50 | 0.75 | 0 | 0 | n/a |")
	require.Contains(t, part, "| net-udp | — | — | — | 100,000 | 1.00 | n/a | n/a | 6.00 | 1.00 | 1.50 | 2 | 0 | n/a |")
	g := Goals(rep)
	require.Contains(t, g, "UDP goals")
	require.Contains(t, g, "| ringloop-udp-uring (parked) | 0.50 met | 0.75 met | 0 met |")
	require.NotContains(t, g, "| net-udp")
}
