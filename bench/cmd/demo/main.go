// Command demo is `make demo`: the short, honest version of the bench. It
// runs ringloop's echo server (each backend, each threading mode) and a
// goroutine-per-connection net echo server, each in its own process pinned
// to core 0 with GOMAXPROCS=1, against the same client pinned to core 1,
// alternating for a few rounds; prints one table and a one-line verdict with
// the ratio, whichever way it goes. First it checks, with SHA-256 over every
// byte, that ringloop's servers lose nothing. Then the same for HTTP:
// ringloop's httpserver (fast API) against net/http, keep-alive, with wrk.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/ringloop/ringloop/bench/peers"
	"github.com/ringloop/ringloop/bench/runner"
	"github.com/ringloop/ringloop/bench/stats"
	"github.com/ringloop/ringloop/engine"
)

func main() {
	conns := flag.Int("conns", 64, "client connections")
	size := flag.Int("size", 128, "message size in bytes")
	rounds := flag.Int("rounds", 5, "alternating rounds")
	dur := flag.Duration("duration", 2*time.Second, "measured time per round")
	httpConns := flag.Int("http-conns", 50, "HTTP keep-alive connections (wrk)")
	flag.Parse()

	ctx := context.Background()
	r := runner.New(runner.Config{Root: ".", Bin: ".bin", Peers: []string{"ringloop-uring", "ringloop-epoll", "net", "ringloop-http-uring", "ringloop-http-epoll", "net/http"}})
	fmt.Println("ringloop demo: building the servers and the client ...")
	if err := r.Build(ctx); err != nil {
		fail(err)
	}

	fmt.Printf("\n1. Nothing lost: 50 connections × 1 KiB messages for 1 s per server, every byte checked (SHA-256)\n\n")
	ok := true
	for _, c := range r.VerifyEcho(ctx, 50, 1024, time.Second) {
		if c.Err != nil {
			ok = false
			fmt.Printf("   %-26s FAILED: %v\n", c.Label, c.Err)
			continue
		}
		fmt.Printf("   %-26s %8d messages echoed intact (%s)\n", c.Label, c.Result.Total, c.Backend)
	}

	fmt.Printf("\n2. Speed: %d connections × %d B ping-pong, server pinned to core 0 (GOMAXPROCS=1, one loop),\n", *conns, *size)
	fmt.Printf("   client pinned to core 1, each server in its own process, %d alternating rounds of %v\n\n", *rounds, *dur)
	c := runner.Case{ID: "demo", Scenario: runner.Pinned1, Kind: peers.Echo, Load: runner.LoadEcho, Conns: *conns, Size: *size,
		Rounds: *rounds, Warmup: 250 * time.Millisecond, Duration: *dur}
	res := r.Run(ctx, []runner.Case{c})[0]

	table(res, "net", "msgs/s", "message", "msg")

	fmt.Printf("\n3. HTTP: plaintext keep-alive, %d connections (wrk), same pinning, %d alternating rounds of %v\n\n", *httpConns, *rounds, *dur)
	hc := runner.Case{ID: "demo-http", Scenario: runner.Pinned1, Kind: peers.HTTP, Load: runner.LoadWrk, Conns: *httpConns,
		Rounds: *rounds, Duration: *dur}
	table(r.Run(ctx, []runner.Case{hc})[0], "net/http", "req/s", "request", "req")
	fmt.Println("\nA shared or busy machine moves these figures; the ratio measured side by side is what counts.")
	fmt.Println("The full comparison (gnet, fasthttp, net/http, a C liburing server, costs): make bench-quick / make bench-compare.")
	if !ok {
		os.Exit(1)
	}
}

// table prints one row per server and a verdict per ringloop row against
// the reference peer ref.
func table(res runner.CaseResult, ref, unit, per, short string) {
	fmt.Printf("%-32s %-9s %-10s %4s %22s %9s %9s %11s\n", "server", "backend", "threading", "GMP", unit+" (min–max)", "p50 µs", "p99 µs", "CPU µs/"+short)
	var base *runner.Row
	for i, row := range res.Rows {
		if row.Peer == ref {
			base = &res.Rows[i]
		}
		if row.Error != "" && !row.Rate.Valid() {
			fmt.Printf("%-32s not measured: %s\n", row.Label, row.Error)
			continue
		}
		fmt.Printf("%-32s %-9s %-10s %4s %22s %9.0f %9.0f %11.2f\n", row.Label+defaultMark(row), row.Backend, row.Threading, row.GOMAXPROCS,
			spread(row.Rate), float64(row.P50.Median), float64(row.P99.Median), float64(row.CPUPerReq.Median))
	}
	fmt.Println("(* the mode a loop on that backend runs by default)")
	fmt.Println()
	for _, row := range res.Rows {
		if row.Peer == ref || base == nil || !row.Rate.Valid() || !base.Rate.Valid() {
			continue
		}
		x := float64(row.Rate.Median / base.Rate.Median)
		verdict := "faster than"
		switch {
		case x < 0.97:
			verdict = "SLOWER than"
		case x < 1.03:
			verdict = "level with (within 3% of)"
		}
		fmt.Printf("Verdict: %s is %s %s here: %.2f× its %s, p99 %.0f vs %.0f µs, %.2f vs %.2f CPU µs per %s.\n",
			row.Label, verdict, ref, x, unit, float64(row.P99.Median), float64(base.P99.Median), float64(row.CPUPerReq.Median), float64(base.CPUPerReq.Median), per)
	}
}

// defaultMark flags a ringloop row that runs its backend's default
// threading mode, the one a program gets without choosing.
func defaultMark(row runner.Row) string {
	b, err := engine.ParseBackend(row.Backend)
	if err != nil || !strings.HasPrefix(row.Peer, "ringloop") || row.Threading != engine.DefaultThreading(b).String() {
		return ""
	}
	return " *"
}

func spread(s stats.Spread) string {
	if s.Min == s.Max {
		return fmt.Sprintf("%.0f", float64(s.Median))
	}
	return strings.TrimSpace(fmt.Sprintf("%.0f (%.0f–%.0f)", float64(s.Median), float64(s.Min), float64(s.Max)))
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "demo:", err)
	os.Exit(1)
}
