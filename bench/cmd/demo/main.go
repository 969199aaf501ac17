// Command demo is `make demo`: the short, honest version of the bench. It
// runs ringloop's echo server (each backend, each threading mode) and a
// goroutine-per-connection net echo server, each in its own process pinned
// to core 0 with GOMAXPROCS=1, against the same client pinned to core 1,
// alternating for a few rounds; prints one table and a one-line verdict with
// the ratio, whichever way it goes. First it checks, with SHA-256 over every
// byte, that ringloop's servers lose nothing. Then the same for HTTP:
// ringloop's httpserver (fast API, each backend and mode) and, on the
// default configuration, its http.Handler adapter (the path most services
// take first: the net/http handler unchanged) against net/http running the
// same handler, keep-alive, with wrk. Last, UDP: ringloop's datagram
// socket (each backend and mode) against net.UDPConn served by one
// goroutine, every echo checked byte for byte first, then measured, lost
// datagrams counted. Rows marked [default] run what engine.New() picks with
// no options.
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
)

func main() {
	conns := flag.Int("conns", 64, "client connections")
	size := flag.Int("size", 128, "message size in bytes")
	rounds := flag.Int("rounds", 3, "alternating rounds")
	dur := flag.Duration("duration", 2*time.Second, "measured time per round")
	httpConns := flag.Int("http-conns", 50, "HTTP keep-alive connections (wrk)")
	udpSockets := flag.Int("udp-sockets", 64, "UDP client sockets (8 datagrams of 64 B in flight each)")
	flag.Parse()

	ctx := context.Background()
	// The adapter runs on the automatic configuration only: what a service
	// moving its http.Handler over gets without choosing anything.
	adapter := []string{"ringloop-http-adapter-uring", "ringloop-http-adapter-epoll"}
	r := runner.New(runner.Config{Root: ".", Bin: ".bin", Peers: append([]string{"ringloop-uring", "ringloop-epoll", "net",
		"ringloop-http-uring", "ringloop-http-epoll", "net/http", "ringloop-udp-uring", "ringloop-udp-epoll", "net-udp"}, adapter...)})
	fmt.Println("ringloop demo: building the servers and the client ...")
	if err := r.Build(ctx); err != nil {
		fail(err)
	}
	c := runner.Case{ID: "demo", Scenario: runner.Pinned1, Kind: peers.Echo, Load: runner.LoadEcho, Conns: *conns, Size: *size,
		Rounds: *rounds, Warmup: 250 * time.Millisecond, Duration: *dur}
	hc := runner.Case{ID: "demo-http", Scenario: runner.Pinned1, Kind: peers.HTTP, Load: runner.LoadWrk, Conns: *httpConns,
		Rounds: *rounds, Duration: *dur, AutoOnly: adapter}
	uc := runner.Case{ID: "demo-udp", Scenario: runner.Pinned1, Kind: peers.UDPEcho, Load: runner.LoadUDP, Conns: *udpSockets, InFlight: 8, Size: 64,
		Rounds: *rounds, Warmup: 250 * time.Millisecond, Duration: *dur}
	fmt.Printf("automatic choice here: %s; about %v to go\n", r.Auto, (r.Estimate([]runner.Case{c, hc, uc}) + 15*time.Second).Round(10*time.Second))

	fmt.Printf("\n1. Nothing lost: 50 connections × 1 KiB messages for 1 s per server, every byte checked (SHA-256)\n\n")
	ok := true
	for _, c := range r.VerifyEcho(ctx, 50, 1024, time.Second) {
		if c.Err != nil {
			ok = false
			fmt.Printf("   %-26s FAILED: %v\n", c.Label, c.Err)
			continue
		}
		fmt.Printf("   %-26s %8d messages echoed intact (%s)\n", c.Label, c.Total, c.Backend)
	}

	fmt.Printf("\n2. Speed: %d connections × %d B ping-pong, server pinned to core 0 (GOMAXPROCS=1, one loop),\n", *conns, *size)
	fmt.Printf("   client pinned to core 1, each server in its own process, %d alternating rounds of %v\n\n", *rounds, *dur)
	res := r.Run(ctx, []runner.Case{c})[0]

	table(r.Auto, res, "net", "msgs/s", "message", "msg")

	fmt.Printf("\n3. HTTP: plaintext keep-alive, %d connections (wrk), same pinning, %d alternating rounds of %v;\n", *httpConns, *rounds, *dur)
	fmt.Printf("   ringloop's fast API, and its http.Handler adapter (default configuration) running the same http.Handler as net/http\n\n")
	table(r.Auto, r.Run(ctx, []runner.Case{hc})[0], "net/http", "req/s", "request", "req")

	fmt.Printf("\n4. UDP: %d client sockets × 8 datagrams of 64 B in flight, echoed; same pinning. First every echo\n", *udpSockets)
	fmt.Printf("   checked byte for byte (1 s per server), then %d alternating rounds of %v; net-udp is net.UDPConn served\n", *rounds, *dur)
	fmt.Printf("   by one goroutine (ReadFromUDPAddrPort, WriteToUDPAddrPort), one system call a datagram each way\n\n")
	for _, c := range r.VerifyUDP(ctx, *udpSockets, 256, time.Second) {
		if c.Err != nil || c.Lost > 0 {
			ok = false
			fmt.Printf("   %-26s FAILED: %d lost, %v\n", c.Label, c.Lost, c.Err)
			continue
		}
		fmt.Printf("   %-26s %8d datagrams echoed intact, none lost (%s)\n", c.Label, c.Total, c.Backend)
	}
	fmt.Println()
	ures := r.Run(ctx, []runner.Case{uc})[0]
	table(r.Auto, ures, "net-udp", "dgrams/s", "datagram", "dgram")
	for _, row := range ures.Rows {
		if row.Lost.Valid() {
			fmt.Printf("Lost: %s %.0f datagrams (median of the rounds).\n", row.Label+mark(row), float64(row.Lost.Median))
		}
	}
	fmt.Println("Latency here runs from a datagram's send to the client goroutine's read of its echo. A server that")
	fmt.Println("outpaces the client (64 goroutines on one core) leaves echoes waiting in the client's own sockets")
	fmt.Println("until Go's scheduler polls them, so the faster rows' p99 is mostly the client's: make bench-compare's")
	fmt.Println("C recvmmsg/sendmmsg server shows the same. net.UDPConn's p50 is the queue at its own socket.")
	fmt.Println("\nA shared or busy machine moves these figures; the ratio measured side by side is what counts.")
	fmt.Println("The full comparison (gnet, fasthttp, net/http, a C liburing server, costs): make bench-quick / make bench-compare.")
	if !ok {
		os.Exit(1)
	}
}

// table prints one row per server and a verdict per ringloop row against
// the reference peer ref.
func table(auto runner.Auto, res runner.CaseResult, ref, unit, per, short string) {
	fmt.Printf("%-48s %-9s %-10s %4s %22s %9s %9s %11s\n", "server", "backend", "threading", "GMP", unit+" (min–max)", "p50 µs", "p99 µs", "CPU µs/"+short)
	var base *runner.Row
	for i, row := range res.Rows {
		if row.Peer == ref {
			base = &res.Rows[i]
		}
		if row.Error != "" && !row.Rate.Valid() {
			fmt.Printf("%-48s not measured: %s\n", row.Label, row.Error)
			continue
		}
		fmt.Printf("%-48s %-9s %-10s %4s %22s %9.0f %9.0f %11.2f\n", row.Label+mark(row), row.Backend, row.Threading, row.GOMAXPROCS,
			spread(row.Rate), float64(row.P50.Median), float64(row.P99.Median), float64(row.CPUPerReq.Median))
	}
	fmt.Printf("([default]: what engine.New() runs here with no options: %s;\n *: the mode a loop forced onto that backend runs unless told otherwise)\n\n", auto)
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
		who := row.Label + mark(row)
		if row.Family == peers.FamilyAdapter {
			who = "the same http.Handler on ringloop's adapter, " + who + ","
		}
		fmt.Printf("Verdict: %s is %s %s here: %.2f× its %s, p99 %.0f vs %.0f µs, %.2f vs %.2f CPU µs per %s.\n",
			who, verdict, ref, x, unit, float64(row.P99.Median), float64(base.P99.Median), float64(row.CPUPerReq.Median), float64(base.CPUPerReq.Median), per)
	}
}

// mark flags the row of the automatic choice, and a ringloop row running
// its backend's default threading mode.
func mark(row runner.Row) string {
	switch {
	case row.Default:
		return " [default]"
	case runner.BackendDefault(row):
		return " *"
	}
	return ""
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
