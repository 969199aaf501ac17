package runner

import (
	"fmt"
	"strings"

	"github.com/ringloop/ringloop/bench/stats"
)

// dnsBaseline is the DNS rows' yardstick: miekg/dns's own server on net.
const dnsBaseline = "miekg-dns"

// dnsGoals are issue 42's for the DNS server under dnsperf: queries per
// server CPU-second at least 1.7× miekg/dns's own server's on net, and no
// query lost. Its other DNS goal, answers byte-identical to miekg/dns's,
// is a test (peers' TestDNSAnswersMatchMiekg), not a figure.
var dnsGoals = []goal{
	{"queries per CPU-second ÷ miekg/dns", "≥ 1.7", perCPUVs(dnsCase, dnsBaseline), atLeast(1.7), nil, 2},
	{"queries lost", "= 0", own(dnsCase, func(r Row) stats.Spread { return r.Lost }), equal(0), nil, 0},
}

// perCPUVs divides a row's work per CPU-second by other's in case id:
// other's median CPU per request over the row's.
func perCPUVs(id, other string) func(Report, string, string) (float64, bool) {
	cpu := figureVs(id, other, cpuPerReq)
	return func(rep Report, peer, mode string) (float64, bool) {
		x, ok := cpu(rep, peer, mode)
		if !ok || x == 0 {
			return 0, false
		}
		return 1 / x, true
	}
}

// dnsTable is a DNS case's table: queries/s, the server's CPU per query
// and queries per CPU-second (the goal's figure), each against miekg/dns's,
// and the queries lost.
func dnsTable(b *strings.Builder, cr CaseResult) {
	fmt.Fprintf(b, "| peer | backend | threading | GOMAXPROCS | queries/s | × %s | CPU µs/query | queries per CPU-s | per CPU-s × %s | lost | RcvbufErrors | allocs/query | vcsw/query |\n", dnsBaseline, dnsBaseline)
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range cr.Rows {
		rat, perCPU, perCPURat := "n/a", "n/a", "n/a"
		if x, ok := ratio(cr, r, dnsBaseline); ok {
			rat = fmt.Sprintf("%.2f", x)
		}
		if r.CPUPerReq.Valid() && r.CPUPerReq.Median > 0 {
			perCPU = group(1e6/float64(r.CPUPerReq.Median), 0)
		}
		if x, ok := figureRatio(cr, r, dnsBaseline, cpuPerReq); ok && x > 0 {
			perCPURat = fmt.Sprintf("%.2f", 1/x)
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n",
			name(r), dash(r.Backend), dash(r.Threading), dash(r.GOMAXPROCS), orErr(r, fmtSpread(r.Rate, 0)), rat,
			fmtNum(r.CPUPerReq, 2), perCPU, perCPURat, fmtSpread(r.Lost, 0), fmtSpread(r.RcvbufErrors, 0), fmtNum(r.Allocs, 2), fmtNum(r.VolPerReq, 3))
	}
}
