package runner

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"

	"github.com/ringloop/ringloop/bench/client"
	"github.com/ringloop/ringloop/bench/peers"
	"github.com/ringloop/ringloop/bench/stats"
)

// dnsCase is the DNS case the goals read.
const dnsCase = "p1-dns-c4-q100"

// dnsRcodes are the answers the query file asks for: records (NOERROR)
// and names the zone lacks (NXDOMAIN).
var dnsRcodes = []string{"NOERROR", "NXDOMAIN"}

// dnsperf drives a DNS server with dnsperf, pinned as wrk is: c.Conns
// client sockets keeping c.InFlight queries out in all, for c.Duration,
// the queries of peers.DNSQueryFile in turn. It returns the queries
// answered; any answer with another response code fails the round. The
// queries lost (dnsperf's count: unanswered after 5 s) and the rise of the
// kernel's Udp RcvbufErrors go into the round.
func (r *Runner) dnsperf(ctx context.Context, c Case, addr string, rd *Round) (int64, error) {
	if _, err := exec.LookPath("dnsperf"); err != nil {
		return 0, errors.New("dnsperf is not installed (make deps installs it)")
	}
	snmp0, snmpErr := client.ReadRcvbufErrors()
	res, err := client.RunDNSPerf(ctx, client.DNSPerfConfig{Addr: addr, Clients: c.Conns, Outstanding: c.InFlight, Duration: c.Duration,
		Queries: filepath.Join(r.Root, peers.DNSQueryFile), Wrap: r.wrap(c)})
	if err != nil {
		return 0, err
	}
	for code, n := range res.Rcodes {
		if n > 0 && !slices.Contains(dnsRcodes, code) {
			return 0, fmt.Errorf("dnsperf: %d answers %s (want only %v): %v", n, code, dnsRcodes, res.Rcodes)
		}
	}
	rd.Rate, rd.Lost = stats.Num(res.Rate), stats.Num(res.Lost)
	if snmp1, err := client.ReadRcvbufErrors(); err == nil && snmpErr == nil {
		rd.RcvbufErrors = stats.Num(snmp1 - snmp0)
	}
	return res.Completed, nil
}
