package runner

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ringloop/ringloop/bench/peers"
	"github.com/ringloop/ringloop/bench/stats"
)

// The DNS case gets a section of its own: queries/s and CPU per query
// against miekg/dns's server, queries per CPU-second (the goal's figure)
// and the loss columns; the goals table reads the ratio of queries per
// CPU-second.
func TestDNSSection(t *testing.T) {
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
	c := Case{ID: dnsCase, Scenario: Pinned1, Kind: peers.DNS, Load: LoadDNS, Conns: 4, InFlight: 100}
	rep := Report{Mode: "full", Machine: map[string]string{}, Scenarios: []Scenario{Pinned1},
		Cases: []CaseResult{{ID: c.ID, Title: c.Title(), Scenario: Pinned1.ID, Kind: string(c.Kind), Load: string(c.Load), Rounds: 1,
			Rows: []Row{row("ringloop-dns-uring", "parked", 150000, 4, 0), row("ringloop-dns-epoll", "locked", 120000, 6, 3), row("miekg-dns", "", 100000, 8, 0)}}}}
	md := Markdown(rep)
	own := strings.Index(md, "## DNS")
	require.Positive(t, own, md)
	part := md[own:]
	require.Contains(t, part, "### DNS over UDP under dnsperf, 4 client sockets, 100 queries outstanding (A, AAAA, TXT, NXDOMAIN) (`p1-dns-c4-q100`)")
	require.Contains(t, part, "| queries/s | × miekg-dns | CPU µs/query | queries per CPU-s | per CPU-s × miekg-dns | lost | RcvbufErrors |")
	require.Contains(t, part, "| ringloop-dns-uring (parked) | — | parked | — | 150,000 | 1.50 | 4.00 | 250,000 | 2.00 | 0 | 0 | n/a | n/a |")
	require.Contains(t, part, "| miekg-dns | — | — | — | 100,000 | 1.00 | 8.00 | 125,000 | 1.00 | 0 | 0 | n/a | n/a |")
	g := Goals(rep)
	require.Contains(t, g, "DNS server goals")
	require.Contains(t, g, "| ringloop-dns-uring (parked) | 2.00 met | 0 met |")
	require.Contains(t, g, "| ringloop-dns-epoll (locked) | 1.33 **missed** | 3 **missed** |")
	require.NotContains(t, g, "| miekg-dns")
}
