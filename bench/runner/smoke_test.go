package runner

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ringloop/ringloop/bench/client"
	"github.com/ringloop/ringloop/bench/peers"
	"github.com/ringloop/ringloop/internal/uringcheck"
)

// TestSmoke runs one tiny round of every case kind against every peer
// through the real binaries, and checks that every row has its figure (the
// only row allowed none is the C server in-process, which says why) and
// that the report and chart are written.
func TestSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs every peer (seconds); not in -short")
	}
	cases, err := Suite(Smoke)
	require.NoError(t, err)
	var log bytes.Buffer
	r := New(Config{Root: "..", Bin: t.TempDir(), Log: &log})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	require.NoError(t, r.Build(ctx))
	require.True(t, r.Auto.Known(), "the automatic choice: %s", r.Auto.Err)
	results := r.Run(ctx, cases)
	require.Len(t, results, len(cases))
	for i, cr := range results {
		require.Len(t, cr.Rows, len(r.caseVariants(cases[i])), "%s: one row per peer and mode", cr.ID)
		for _, row := range cr.Rows {
			if row.Peer == "c-liburing" && cr.Scenario == InProc2.ID {
				require.Contains(t, row.Error, "not a Go program", "%s: the row says why", cr.ID)
				continue
			}
			if p, _ := peers.Lookup(row.Peer); p.NeedsURing && noURing() {
				require.NotEmpty(t, row.Error, "%s / %s: without io_uring the row says why", cr.ID, row.Label)
				continue
			}
			require.Empty(t, row.Error, "%s / %s\n%s", cr.ID, row.Label, log.String())
			var s = row.Rate
			switch cr.Load {
			case string(LoadIdle):
				s = row.RSSPerConn
			case string(LoadSyscalls):
				s = row.Syscalls
				require.Positive(t, float64(s.Median), "%s / %s: a server makes system calls", cr.ID, row.Label)
			case string(LoadRest):
				s = row.RestCPU
				require.GreaterOrEqual(t, float64(s.Median), 0.0, "%s / %s: CPU at rest", cr.ID, row.Label)
				require.GreaterOrEqual(t, float64(row.Threads.Median), 1.0, "%s / %s: a process has a thread", cr.ID, row.Label)
				require.True(t, row.NewThreads.Valid(), "%s / %s: new threads", cr.ID, row.Label)
				require.GreaterOrEqual(t, float64(row.WakeupsPerS.Median), 0.0, "%s / %s: wakeups per second", cr.ID, row.Label)
				require.False(t, row.Rate.Valid(), "%s / %s: no client, no rate", cr.ID, row.Label)
			case string(LoadH2), string(LoadDNS): // h2load and dnsperf report no percentiles
				require.Positive(t, float64(row.Rate.Median), "%s / %s", cr.ID, row.Label)
				require.True(t, row.CPUPerReq.Valid(), "%s / %s: CPU per request", cr.ID, row.Label)
			default:
				require.Positive(t, float64(row.Rate.Median), "%s / %s", cr.ID, row.Label)
				require.True(t, row.P99.Valid(), "%s / %s: p99", cr.ID, row.Label)
				require.True(t, row.CPUPerReq.Valid(), "%s / %s: CPU per request", cr.ID, row.Label)
			}
			require.True(t, s.Valid(), "%s / %s: no figure", cr.ID, row.Label)
			require.NotEmpty(t, row.Backend, "%s / %s: backend from the banner", cr.ID, row.Label)
		}
		defaults := map[string]int{}
		by, fams := familyRows(cr)
		for _, f := range fams {
			for _, row := range by[f] {
				if row.Default {
					defaults[f]++
					require.Equal(t, r.Auto.Backend, row.Backend, "%s / %s: the default row runs the automatic backend", cr.ID, row.Label)
					require.Equal(t, r.Auto.Threading, row.Threading, "%s / %s", cr.ID, row.Label)
				}
			}
			require.Equal(t, 1, defaults[f], "%s: one default row of %s", cr.ID, f)
		}
	}

	out := t.TempDir()
	rep := NewReport(Smoke, "go test", r.Config, cases, results)
	md, err := Write(out, rep)
	require.NoError(t, err)
	for _, n := range peers.Names("") {
		require.Contains(t, md, n)
	}
	require.Contains(t, md, "## TLS echo", "TLS echo has a section of its own")
	require.Contains(t, md, "× net+tls |", "TLS echo ratios divide by net+tls")
	require.Contains(t, md, "| CPU % of a core | threads | new threads | wakeups/s |", "the rest case has its own table")
	require.Contains(t, md, "## HTTP/2 over TLS", "HTTP/2 has sections of its own")
	require.Contains(t, md, "× net/http-h2c |", "h2c ratios divide by net/http's h2c")
	require.Contains(t, md, "## "+DefaultVsBestTitle)
	require.Contains(t, md, "## "+UringVsEpollTitle)
	require.Contains(t, md, "[default]")
	fams := map[string]bool{}
	for _, d := range rep.DefaultVsBest {
		fams[d.Family] = true
		require.False(t, isNaN(d.RateRatio), "%s / %s: every default row measured: %s", d.Case, d.Family, d.Note)
		require.LessOrEqual(t, float64(d.RateRatio), 1.0, "%s / %s: the best is at least the default", d.Case, d.Family)
		if d.CPU > 0 { // else under the CPU tick's resolution in so short a run: no ratio
			require.GreaterOrEqual(t, float64(d.CPURatio), 1.0, "%s / %s", d.Case, d.Family)
		} else {
			require.True(t, isNaN(d.CPURatio), "%s / %s: no CPU figure, no ratio", d.Case, d.Family)
		}
	}
	require.Len(t, fams, len(peers.Families), "every family compared: %v", fams)
	require.NotEmpty(t, rep.UringVsEpoll)
	require.FileExists(t, filepath.Join(out, "latest.json"))
	require.NoError(t, Plot(ctx, out, rep))
	png, err := os.ReadFile(filepath.Join(out, "latest.png"))
	require.NoError(t, err)
	require.True(t, bytes.HasPrefix(png, []byte("\x89PNG")), "a PNG")
}

// noURing reports whether io_uring peers cannot run here and need not
// (RINGLOOP_REQUIRE_URING unset): their rows must then say why.
func noURing() bool { return uringcheck.Unavailable() != "" && !uringcheck.Required() }

// TestEchoServersLoseNothing checks every echo server, the C one included,
// every TLS echo server (through the TLS client) and every WebSocket server
// (each message a frame) returns every byte in order: 16 KiB messages (several buffers, or TLS records, each) on 32
// connections, checked with SHA-256.
func TestEchoServersLoseNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs every peer (seconds); not in -short")
	}
	r := New(Config{Root: "..", Bin: t.TempDir()})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	require.NoError(t, r.Build(ctx))
	vs := r.variants(peers.Echo)
	tlsFrom := len(vs)
	vs = append(vs, r.variants(peers.TLSEcho)...)
	require.Greater(t, len(vs), tlsFrom, "TLS echo peers are registered")
	wsFrom := len(vs)
	vs = append(vs, r.variants(peers.WebSocket)...)
	require.Greater(t, len(vs), wsFrom, "WebSocket peers are registered")
	for i, v := range vs {
		useTLS, useWS := i >= tlsFrom && i < wsFrom, i >= wsFrom
		t.Run(strings.ReplaceAll(v.label, " ", "_"), func(t *testing.T) {
			if v.peer.NeedsURing && noURing() {
				t.Skip(uringcheck.Unavailable())
			}
			srv, err := r.startServer(ctx, v, Pinned1)
			require.NoError(t, err)
			defer func() { require.NoError(t, srv.stop()) }()
			for _, size := range []int{1, 1000, 16 << 10} {
				res, err := client.RunEcho(ctx, client.EchoConfig{Addr: srv.addr, Conns: 32, Size: size, Duration: 100 * time.Millisecond, Verify: true, TLS: useTLS, WebSocket: useWS})
				require.NoError(t, err, "size %d", size)
				require.True(t, res.Verified, "size %d: every message of every connection checked", size)
				require.Equal(t, res.Total, res.Checked, "size %d: messages checked", size)
				require.GreaterOrEqual(t, res.Checked, int64(32), "size %d: a message per connection at least", size)
			}
		})
	}
}
