package client

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// DNSPerfConfig is one dnsperf run (DNS-OARC's load generator, Debian's
// dnsperf, one thread): Clients UDP sockets keeping Outstanding queries
// out in all, the queries of the file Queries in turn, for Duration.
type DNSPerfConfig struct {
	Addr        string // host:port of the server
	Clients     int    // -c
	Outstanding int    // -q
	Duration    time.Duration
	Queries     string   // -d: "name type" a line
	Wrap        []string // argv prefix, e.g. taskset -c 1
}

// DNSPerfResult is what dnsperf reported: queries sent, answered
// (Completed) and never answered within its 5 s timeout (Lost), the
// answers by response code, and queries answered per second.
type DNSPerfResult struct {
	Sent      int64            `json:"sent"`
	Completed int64            `json:"completed"`
	Lost      int64            `json:"lost"`
	Rcodes    map[string]int64 `json:"rcodes"`
	Seconds   float64          `json:"seconds"`
	Rate      float64          `json:"queries_per_sec"`
}

// RunDNSPerf runs dnsperf and parses its report.
func RunDNSPerf(ctx context.Context, c DNSPerfConfig) (DNSPerfResult, error) {
	host, port, err := net.SplitHostPort(c.Addr)
	if err != nil {
		return DNSPerfResult{}, err
	}
	args := append([]string{}, c.Wrap...)
	args = append(args, "dnsperf", "-s", host, "-p", port, "-d", c.Queries, "-T", "1",
		"-c", strconv.Itoa(c.Clients), "-q", strconv.Itoa(c.Outstanding),
		"-l", strconv.FormatFloat(c.Duration.Seconds(), 'f', -1, 64))
	out, err := exec.CommandContext(ctx, args[0], args[1:]...).CombinedOutput()
	if err != nil {
		return DNSPerfResult{}, fmt.Errorf("dnsperf: %v: %s", err, strings.TrimSpace(string(out)))
	}
	return ParseDNSPerf(string(out))
}

// ParseDNSPerf reads dnsperf's statistics:
//
//	Queries sent:         303042
//	Queries completed:    303042 (100.00%)
//	Queries lost:         0 (0.00%)
//	Response codes:       NOERROR 189402 (62.50%), NXDOMAIN 113640 (37.50%)
//	Run time (s):         1.500205
//	Queries per second:   202000.393280
func ParseDNSPerf(out string) (DNSPerfResult, error) {
	r := DNSPerfResult{Rcodes: map[string]int64{}}
	seen := map[string]bool{}
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		key, val, ok := strings.Cut(strings.TrimSpace(sc.Text()), ":")
		f := strings.Fields(val)
		if !ok || len(f) == 0 {
			continue
		}
		var err error
		switch key {
		case "Queries sent":
			r.Sent, err = strconv.ParseInt(f[0], 10, 64)
		case "Queries completed":
			r.Completed, err = strconv.ParseInt(f[0], 10, 64)
		case "Queries lost":
			r.Lost, err = strconv.ParseInt(f[0], 10, 64)
		case "Run time (s)":
			r.Seconds, err = strconv.ParseFloat(f[0], 64)
		case "Queries per second":
			r.Rate, err = strconv.ParseFloat(f[0], 64)
		case "Response codes":
			for _, part := range strings.Split(val, ",") {
				w := strings.Fields(part) // NOERROR 189402 (62.50%)
				if len(w) < 2 {
					return r, fmt.Errorf("dnsperf: bad response codes %q", val)
				}
				n, perr := strconv.ParseInt(w[1], 10, 64)
				if perr != nil {
					return r, fmt.Errorf("dnsperf: bad response codes %q", val)
				}
				r.Rcodes[w[0]] += n
			}
		default:
			continue
		}
		if err != nil {
			return r, fmt.Errorf("dnsperf: bad line %q: %v", sc.Text(), err)
		}
		seen[key] = true
	}
	for _, k := range []string{"Queries sent", "Queries completed", "Queries lost", "Queries per second"} {
		if !seen[k] {
			return r, fmt.Errorf("dnsperf: no %q in its report: %q", k, out)
		}
	}
	return r, nil
}
