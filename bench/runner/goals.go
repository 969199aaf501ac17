package runner

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/ringloop/ringloop/bench/stats"
)

// goal is one of the targets the issues set, read from a report: a ratio
// of one ringloop row's figure to a peer's (or to its own figure in another
// case), and the bound it must meet.
type goal struct {
	title string // column header
	want  string // the bound, as a reader sees it
	ratio func(rep Report, peer, mode string) (float64, bool)
	meets func(float64) bool
	only  []string // the peers it judges; nil: every row of its table
	prec  int      // decimals shown
}

// goalTable is one table of goals: the ringloop rows of one kind of load
// (the peers named with prefix; "" is "ringloop").
type goalTable struct {
	intro  string
	load   Load
	goals  []goal
	prefix string
}

// goalTables: the wait/wake targets the threading modes are judged by (the
// engine's package doc quotes them; "never worse" allows 5% for
// round-to-round noise), and the HTTP server's.
var goalTables = []goalTable{
	{"Wait/wake goals", LoadEcho, waitWakeGoals, ""},
	{"HTTP server goals", LoadWrk, httpGoals, ""},
	{"TLS on the loop goals", LoadHandshake, tlsGoals, "looptls"},
	{"UDP goals", LoadUDP, udpGoals, "ringloop-udp"},
	{"HTTP/2 goals (the adapter's is met when either of its two columns is)", LoadH2, h2Goals, "ringloop-h2"},
	{"gRPC goals (met when both columns are)", LoadH2, grpcGoals, "ringloop-grpc"},
	{"DNS server goals (the other, answers byte-identical to miekg/dns's for the same zone and queries, is a test: peers' TestDNSAnswersMatchMiekg)", LoadDNS, dnsGoals, "ringloop-dns"},
}

var waitWakeGoals = []goal{
	{"in-process 64 conn ÷ net", "≥ 1.5", rateVs("i2-echo-c64-128", "net"), atLeast(1.5), nil, 2},
	{"1 conn p50 ÷ net", "≤ 0.9", figureVs("p1-echo-c1-128", "net", func(r Row) stats.Spread { return r.P50 }), atMost(0.9), nil, 2},
	{"1 conn CPU/rt ÷ C", "≤ 1.15", figureVs("p1-echo-c1-128", "c-liburing", func(r Row) stats.Spread { return r.CPUPerReq }), atMost(1.15), nil, 2},
	{"64 conn ÷ best of net, gnet", "≥ 1.25", rateVs("p1-echo-c64-128", "net", "gnet"), atLeast(1.25), nil, 2},
	{"256 conn ÷ best of net, gnet", "≥ 1.25", rateVs("p1-echo-c256-128", "net", "gnet"), atLeast(1.25), nil, 2},
	{"64 conn CPU/msg ÷ C", "≤ 1", figureVs("p1-echo-c64-128", "c-liburing", func(r Row) stats.Spread { return r.CPUPerReq }), atMost(1), nil, 2},
	{"64 conn GOMAXPROCS 2 ÷ 1", "≥ 0.95", selfVs("p2-echo-c64-128", "p1-echo-c64-128"), atLeast(0.95), nil, 2},
	{"64 conn GOMAXPROCS 4 ÷ 1", "≥ 0.95", selfVs("p4-echo-c64-128", "p1-echo-c64-128"), atLeast(0.95), nil, 2},
	// Figures, not ratios: a loop with nothing to do must cost (almost)
	// nothing and start no threads.
	{"idle loop CPU % of a core", "< 0.5", own("p1-rest-echo", func(r Row) stats.Spread { return r.RestCPU }), below(0.5), nil, 2},
	{"new threads", "= 0", own("p1-rest-echo", func(r Row) stats.Spread { return r.NewThreads }), equal(0), nil, 0},
}

// fastAPI names the httpserver rows that serve with the fast API.
var fastAPI = []string{"ringloop-http-uring", "ringloop-http-epoll"}

// adapter names the httpserver rows that serve an http.Handler.
var adapter = []string{"ringloop-http-adapter-uring", "ringloop-http-adapter-epoll"}

var httpGoals = []goal{
	{"keep-alive 50 ÷ net/http", "≥ 3", rateVs("p1-http-c50", "net/http"), atLeast(3), fastAPI, 2},
	{"adapter keep-alive 50 ÷ net/http", "≥ 1.5", rateVs("p1-http-c50", "net/http"), atLeast(1.5), adapter, 2},
	{"keep-alive 50 ÷ fasthttp", "≥ 1.3", rateVs("p1-http-c50", "fasthttp"), atLeast(1.3), fastAPI, 2},
	{"pipelined 16 ÷ fasthttp", "≥ 1.2", rateVs("p1-http-c256-p16", "fasthttp"), atLeast(1.2), fastAPI, 2},
	{"p99 at 70% of net/http's peak ÷ net/http's", "≤ 0.33", figureVs("p1-open-c50-70", "net/http", func(r Row) stats.Spread { return r.P99 }), atMost(1.0 / 3), nil, 2},
	// Per request over a whole run: the loop's own rare allocations (timers,
	// the Date line) show as a few thousandths.
	{"allocs/request", "< 0.01", own("p1-http-c50", func(r Row) stats.Spread { return r.Allocs }), below(0.01), fastAPI, 2},
}

// tlsGoals are looptls's against crypto/tls on net's listener (issue "TLS
// on the loop"): full handshakes as fast, idle connections far lighter.
var tlsGoals = []goal{
	{"full handshakes/s ÷ net+tls", "≥ 0.95", rateVs("p1-tls-handshake-c16", "net+tls"), atLeast(0.95), nil, 2},
	{"RSS per idle TLS conn ÷ net+tls", "≤ 0.25", figureVs("p1-tls-idle-10k", "net+tls", func(r Row) stats.Spread { return r.RSSPerConn }), atMost(0.25), nil, 2},
}

// udpGoals are the datagram sockets' (issue "Datagrams on the loop"): CPU
// per datagram echoed well under net.UDPConn's and near a plain
// recvmmsg/sendmmsg loop's, and nothing lost where net.UDPConn loses
// nothing.
var udpGoals = []goal{
	{"64 sockets 64 B CPU/dgram ÷ net.UDPConn", "≤ 0.7", figureVs("p1-udp-c64-64", "net-udp", func(r Row) stats.Spread { return r.CPUPerReq }), atMost(0.7), nil, 2},
	{"64 sockets 64 B CPU/dgram ÷ C recvmmsg", "≤ 1.1", figureVs("p1-udp-c64-64", "c-mmsg", func(r Row) stats.Spread { return r.CPUPerReq }), atMost(1.1), nil, 2},
	{"64 sockets 64 B datagrams lost", "= 0", own("p1-udp-c64-64", func(r Row) stats.Spread { return r.Lost }), equal(0), nil, 0},
}

func atLeast(x float64) func(float64) bool { return func(v float64) bool { return v >= x } }
func atMost(x float64) func(float64) bool  { return func(v float64) bool { return v <= x } }
func below(x float64) func(float64) bool   { return func(v float64) bool { return v < x } }
func equal(x float64) func(float64) bool   { return func(v float64) bool { return v == x } }

// findRow returns the row of peer in case id; mode "" matches any threading.
func findRow(rep Report, id, peer, mode string) (Row, bool) {
	for _, cr := range rep.Cases {
		if cr.ID != id {
			continue
		}
		for _, r := range cr.Rows {
			if r.Peer == peer && (mode == "" || r.Threading == mode) {
				return r, true
			}
		}
	}
	return Row{}, false
}

// rateVs divides a row's median rate by the best median rate of others.
func rateVs(id string, others ...string) func(Report, string, string) (float64, bool) {
	return func(rep Report, peer, mode string) (float64, bool) {
		r, ok := findRow(rep, id, peer, mode)
		if !ok || !r.Rate.Valid() {
			return 0, false
		}
		best := 0.0
		for _, o := range others {
			if or, ok := findRow(rep, id, o, ""); ok && or.Rate.Valid() {
				best = max(best, float64(or.Rate.Median))
			}
		}
		if best == 0 {
			return 0, false
		}
		return float64(r.Rate.Median) / best, true
	}
}

// figureVs divides a row's median figure by other's in the same case.
func figureVs(id, other string, f func(Row) stats.Spread) func(Report, string, string) (float64, bool) {
	return func(rep Report, peer, mode string) (float64, bool) {
		r, ok1 := findRow(rep, id, peer, mode)
		o, ok2 := findRow(rep, id, other, "")
		if !ok1 || !ok2 || !f(r).Valid() || !f(o).Valid() || f(o).Median == 0 {
			return 0, false
		}
		return float64(f(r).Median / f(o).Median), true
	}
}

// own is a row's own median figure in case id.
func own(id string, f func(Row) stats.Spread) func(Report, string, string) (float64, bool) {
	return func(rep Report, peer, mode string) (float64, bool) {
		r, ok := findRow(rep, id, peer, mode)
		if !ok || !f(r).Valid() {
			return 0, false
		}
		return float64(f(r).Median), true
	}
}

// selfVs divides a row's median rate in case id by its own in case base.
func selfVs(id, base string) func(Report, string, string) (float64, bool) {
	return func(rep Report, peer, mode string) (float64, bool) {
		r, ok1 := findRow(rep, id, peer, mode)
		b, ok2 := findRow(rep, base, peer, mode)
		if !ok1 || !ok2 || !r.Rate.Valid() || !b.Rate.Valid() || b.Rate.Median == 0 {
			return 0, false
		}
		return float64(r.Rate.Median / b.Rate.Median), true
	}
}

// Goals renders each table of targets: a row per ringloop server and
// threading mode, a column per goal, each cell the measured ratio and
// whether it meets the bound. A table no goal of which can be read is left
// out; Goals is empty when none can.
func Goals(rep Report) string {
	var out []string
	for _, t := range goalTables {
		if s := t.render(rep); s != "" {
			out = append(out, s)
		}
	}
	return strings.Join(out, "\n")
}

func (t goalTable) render(rep Report) string {
	type variant struct{ peer, label, mode string }
	var vs []variant
	seen := map[string]bool{}
	for _, cr := range rep.Cases {
		if cr.Load != string(t.load) {
			continue
		}
		for _, r := range cr.Rows {
			if strings.HasPrefix(r.Peer, cmp.Or(t.prefix, "ringloop")) && !seen[r.Label] && t.judges(r.Peer) {
				seen[r.Label] = true
				vs = append(vs, variant{r.Peer, name(r), r.Threading})
			}
		}
	}
	var b strings.Builder
	measured := false
	b.WriteString("| server |")
	for _, g := range t.goals {
		fmt.Fprintf(&b, " %s (%s) |", g.title, g.want)
	}
	b.WriteString("\n|---|" + strings.Repeat("---|", len(t.goals)) + "\n")
	for _, v := range vs {
		fmt.Fprintf(&b, "| %s |", v.label)
		for _, g := range t.goals {
			if g.only != nil && !slices.Contains(g.only, v.peer) {
				b.WriteString(" - |")
				continue
			}
			x, ok := g.ratio(rep, v.peer, v.mode)
			switch {
			case !ok:
				b.WriteString(" n/a |")
			case g.meets(x):
				measured = true
				fmt.Fprintf(&b, " %.*f met |", g.prec, x)
			default:
				measured = true
				fmt.Fprintf(&b, " %.*f **missed** |", g.prec, x)
			}
		}
		b.WriteString("\n")
	}
	if !measured {
		return ""
	}
	return t.intro + " (medians in this run, ratios unless the bound is a figure; n/a: the case is not in this mode's suite; -: the goal is not this server's):\n\n" + b.String()
}

// judges reports whether some goal of the table applies to peer.
func (t goalTable) judges(peer string) bool {
	for _, g := range t.goals {
		if g.only == nil || slices.Contains(g.only, peer) {
			return true
		}
	}
	return false
}
