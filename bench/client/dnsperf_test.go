package client

import (
	"context"
	"net"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// dnsperf 2.10's report of a 1.5 s run (its header cut).
const dnsperfOut = `[Status] Command line: dnsperf -s 127.0.0.1 -p 5399 -d dns-queries.txt -l 1.5 -c 4 -T 1 -q 100
[Status] Sending queries (to 127.0.0.1:5399)
[Status] Started at: Sat Nov 28 19:22:41 2026
[Status] Stopping after 1.500000 seconds
[Status] Testing complete (time limit)

Statistics:

  Queries sent:         303042
  Queries completed:    303042 (100.00%)
  Queries lost:         0 (0.00%)

  Response codes:       NOERROR 189402 (62.50%), NXDOMAIN 113640 (37.50%)
  Average packet size:  request 35, response 98
  Run time (s):         1.500205
  Queries per second:   202000.393280

  Average Latency (s):  0.000399 (min 0.000013, max 0.004936)
  Latency StdDev (s):   0.000277
`

func TestParseDNSPerf(t *testing.T) {
	r, err := ParseDNSPerf(dnsperfOut)
	require.NoError(t, err)
	require.Equal(t, DNSPerfResult{Sent: 303042, Completed: 303042, Rcodes: map[string]int64{"NOERROR": 189402, "NXDOMAIN": 113640},
		Seconds: 1.500205, Rate: 202000.393280}, r)

	lossy := `  Queries sent:         1000
  Queries completed:    990 (99.00%)
  Queries lost:         10 (1.00%)

  Response codes:       NOERROR 900 (90.91%), SERVFAIL 90 (9.09%)
  Run time (s):         1.000000
  Queries per second:   990.000000
`
	r, err = ParseDNSPerf(lossy)
	require.NoError(t, err)
	require.Equal(t, DNSPerfResult{Sent: 1000, Completed: 990, Lost: 10, Rcodes: map[string]int64{"NOERROR": 900, "SERVFAIL": 90}, Seconds: 1, Rate: 990}, r)

	_, err = ParseDNSPerf("[Status] Command line: dnsperf\nError: invalid argument\n")
	require.ErrorContains(t, err, "no \"Queries sent\"")
	_, err = ParseDNSPerf("  Queries sent:         many\n")
	require.ErrorContains(t, err, "bad line")
}

// RunDNSPerf's command line works with the installed dnsperf: against a
// responder that answers every query NXDOMAIN (its header flipped to a
// response), every query sent is answered or still out at the end, none
// lost.
func TestRunDNSPerf(t *testing.T) {
	if _, err := exec.LookPath("dnsperf"); err != nil {
		t.Skip("dnsperf is not installed (make deps installs it)")
	}
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	require.NoError(t, err)
	defer pc.Close()
	go func() {
		buf := make([]byte, 512)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			if n < 12 {
				continue
			}
			buf[2] |= 0x80           // QR
			buf[3] = buf[3]&0xf0 | 3 // NXDOMAIN
			_, _ = pc.WriteTo(buf[:n], from)
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	r, err := RunDNSPerf(ctx, DNSPerfConfig{Addr: pc.LocalAddr().String(), Clients: 2, Outstanding: 8, Duration: 300 * time.Millisecond,
		Queries: filepath.Join("..", "scripts", "dns-queries.txt")})
	require.NoError(t, err)
	require.Positive(t, r.Completed)
	require.Zero(t, r.Lost)
	require.Equal(t, map[string]int64{"NXDOMAIN": r.Completed}, r.Rcodes)
	require.Positive(t, r.Rate)
}
