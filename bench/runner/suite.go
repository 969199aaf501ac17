// Package runner runs the comparison: it builds every peer, runs each case
// for every peer in alternating rounds (A B C A B C ...), samples the server
// process's costs from /proc, and writes the report.
package runner

import (
	"fmt"
	"time"

	"github.com/ringloop/ringloop/bench/peers"
)

// Load is how a case drives its servers.
type Load string

// The loads.
const (
	LoadEcho     Load = "echo"      // ping-pong echo client
	LoadWrk      Load = "wrk"       // closed-loop HTTP (pipelined when Depth > 1)
	LoadOpenLoop Load = "open-loop" // constant-rate HTTP, latency from the intended send time
	LoadIdle     Load = "idle"      // hold idle connections, read the server's RSS
	LoadSyscalls Load = "syscalls"  // a short echo or HTTP run with the server's system calls counted
	LoadRest     Load = "rest"      // no client at all: what the server costs doing nothing
	// LoadHandshake drives TLS echo servers with short connections: a full
	// TLS 1.3 handshake, one echo, close; Conns dialers at once.
	LoadHandshake Load = "handshake"
	LoadBcast     Load = "broadcast" // WebSocket: one sender, every connection receives; deliveries/s, delivery latency
	// LoadUDP drives UDP echo servers: Conns client sockets, each keeping
	// InFlight datagrams of Size bytes out; datagrams/s, loss.
	LoadUDP Load = "udp-echo"
	// LoadH2 drives HTTP/2 servers with h2load: Conns connections, InFlight
	// streams each, GET /plaintext; over TLS for kind H2, h2c for H2C.
	LoadH2 Load = "h2load"
	// LoadDNS drives DNS servers with dnsperf: Conns client sockets,
	// InFlight queries outstanding in all, the query file's queries in turn.
	LoadDNS Load = "dnsperf"
)

// Scenario is where server and client run.
type Scenario struct {
	ID         string
	Title      string
	GOMAXPROCS int
	Pinned     bool // server on core 0, client on core 1
	InProc     bool // clients are goroutines in the server's process
}

// The scenarios of the comparison. Pinned4 asks whether a loop sharing its
// core with more Ps than it needs loses anything (GOMAXPROCS 2 and 4 must
// never be worse than 1).
var (
	Pinned1 = Scenario{"pinned-1", "Cross-process: server pinned to core 0 (GOMAXPROCS=1, one loop), client pinned to core 1", 1, true, false}
	InProc2 = Scenario{"inproc-2", "In-process: clients are goroutines in the server's process, GOMAXPROCS=2, unpinned", 2, false, true}
	Pinned2 = Scenario{"pinned-2", "Cross-process: server on core 0 with GOMAXPROCS=2 and one loop, client pinned to core 1", 2, true, false}
	Pinned4 = Scenario{"pinned-4", "Cross-process: server on core 0 with GOMAXPROCS=4 and one loop, client pinned to core 1", 4, true, false}
)

// Case is one measured configuration, run for every peer of its kind.
type Case struct {
	ID       string
	Scenario Scenario
	Kind     peers.Kind
	Load     Load
	Conns    int
	Size     int      // echo (broadcast) message bytes
	Depth    int      // HTTP pipelining depth (wrk)
	InFlight int      // UDP echo: datagrams out at the server per client socket; h2load: streams per connection; dnsperf: queries outstanding
	Fraction float64  // open loop: fraction of the peak (from RateFrom)
	Warm     int      // idle: exchanges on one connection before the idle ones
	Only     []string // run only these peers (nil: every peer of the kind)
	AutoOnly []string // of these peers, only the row of the automatic choice (Auto) runs
	// BackendDefault runs each ringloop family's rows only in the threading
	// mode its backend defaults to (peers.DefaultThreading): what a user
	// who forces nothing but the backend gets.
	BackendDefault bool
	RateFrom       string // open loop: the wrk case whose median sets the peak
	RatePeer       string // open loop: the peer whose median is the peak ("": the slowest peer's)
	Rounds         int
	Warmup         time.Duration // rest: how long the server settles after its banner
	Duration       time.Duration
}

// Title says what the case measures, for the report.
func (c Case) Title() string {
	switch c.Load {
	case LoadEcho:
		if c.Kind == peers.TLSEcho {
			return fmt.Sprintf("TLS echo, %d conn, %s", c.Conns, bytesLabel(c.Size))
		}
		if c.Kind == peers.WebSocket {
			return fmt.Sprintf("WebSocket echo, %d conn, %s", c.Conns, bytesLabel(c.Size))
		}
		return fmt.Sprintf("echo, %d conn, %s", c.Conns, bytesLabel(c.Size))
	case LoadWrk:
		if c.Kind == peers.HTTPS {
			return fmt.Sprintf("HTTPS plaintext keep-alive, %d conn (wrk)", c.Conns)
		}
		if c.Depth > 1 {
			return fmt.Sprintf("HTTP plaintext, %d conn, pipelined %d deep (wrk)", c.Conns, c.Depth)
		}
		return fmt.Sprintf("HTTP plaintext keep-alive, %d conn (wrk)", c.Conns)
	case LoadOpenLoop:
		peak := "the slowest peak"
		if c.RatePeer != "" {
			peak = c.RatePeer + "'s peak"
		}
		return fmt.Sprintf("HTTP open loop, %d conn, %.0f%% of %s", c.Conns, c.Fraction*100, peak)
	case LoadIdle:
		if c.Kind == peers.TLSEcho {
			return fmt.Sprintf("TLS echo, %d idle connections (full handshake and one echo each)", c.Conns)
		}
		if c.Kind == peers.H2 {
			return fmt.Sprintf("HTTP/2 over TLS, %d idle connections (full handshake negotiating h2 and one GET each)", c.Conns)
		}
		return fmt.Sprintf("%s, %d idle connections", c.Kind, c.Conns)
	case LoadHandshake:
		return fmt.Sprintf("TLS 1.3 full handshakes, %d dialers (handshake, %s echoed, close)", c.Conns, bytesLabel(c.Size))
	case LoadSyscalls:
		if c.Kind == peers.HTTP {
			return fmt.Sprintf("HTTP, %d conn: system calls", c.Conns)
		}
		return fmt.Sprintf("echo, %d conn, %s: system calls", c.Conns, bytesLabel(c.Size))
	case LoadRest:
		return fmt.Sprintf("%s server at rest, no client, %s", c.Kind, c.Duration)
	case LoadUDP:
		return fmt.Sprintf("UDP echo, %d client socket%s × %d in flight, %s", c.Conns, plural(c.Conns), c.InFlight, bytesLabel(c.Size))
	case LoadH2:
		over := "over TLS 1.3 (ALPN h2)"
		if c.Kind == peers.H2C {
			over = "in clear (h2c, prior knowledge)"
		}
		if c.Kind == peers.GRPC {
			return fmt.Sprintf("gRPC unary over h2c, %d conn × %d streams (h2load)", c.Conns, c.InFlight)
		}
		return fmt.Sprintf("HTTP/2 plaintext %s, %d conn × %d streams (h2load)", over, c.Conns, c.InFlight)
	case LoadDNS:
		return fmt.Sprintf("DNS over UDP under dnsperf, %d client socket%s, %d queries outstanding (A, AAAA, TXT, NXDOMAIN)", c.Conns, plural(c.Conns), c.InFlight)
	case LoadBcast:
		return fmt.Sprintf("WebSocket broadcast of %s to %d conn (rate: deliveries/s)", bytesLabel(c.Size), c.Conns)
	}
	return c.ID
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func bytesLabel(n int) string {
	if n >= 1024 && n%1024 == 0 {
		return fmt.Sprintf("%d KiB", n/1024)
	}
	return fmt.Sprintf("%d B", n)
}

// Mode selects a suite.
type Mode string

// The suites: quick (headline rows, one round, ~3-4 min), full (the sweep,
// 5 rounds, ~30 min; Runner.Estimate) and smoke (every server and client once, seconds:
// what the tests run).
const (
	Quick Mode = "quick"
	Full  Mode = "full"
	Smoke Mode = "smoke"
)

// Suite returns the cases of a mode, in run order (an open-loop case after
// the wrk case its rate comes from).
func Suite(m Mode) ([]Case, error) {
	var cs []Case
	add := func(c Case) { cs = append(cs, c) }
	switch m {
	case Smoke:
		d, w := 300*time.Millisecond, 50*time.Millisecond
		add(Case{ID: "echo", Scenario: Pinned1, Kind: peers.Echo, Load: LoadEcho, Conns: 2, Size: 128, Rounds: 1, Warmup: w, Duration: d})
		add(Case{ID: "http", Scenario: Pinned1, Kind: peers.HTTP, Load: LoadWrk, Conns: 4, Rounds: 1, Duration: time.Second})
		// Every server meets every client once; the loads that only
		// exercise a client (pipelining, perf around wrk) use one peer.
		add(Case{ID: "http-pipe", Scenario: Pinned1, Kind: peers.HTTP, Load: LoadWrk, Conns: 4, Depth: 4, Rounds: 1, Duration: time.Second, Only: []string{"net/http"}})
		add(Case{ID: "http-open", Scenario: Pinned1, Kind: peers.HTTP, Load: LoadOpenLoop, Conns: 2, Fraction: 0.1, RateFrom: "http", Rounds: 1, Warmup: w, Duration: d})
		add(Case{ID: "inproc-echo", Scenario: InProc2, Kind: peers.Echo, Load: LoadEcho, Conns: 2, Size: 128, Rounds: 1, Warmup: w, Duration: d})
		add(Case{ID: "inproc-http", Scenario: InProc2, Kind: peers.HTTP, Load: LoadOpenLoop, Conns: 2, Fraction: 0.1, RateFrom: "http", Rounds: 1, Warmup: w, Duration: d})
		add(Case{ID: "idle-echo", Scenario: Pinned1, Kind: peers.Echo, Load: LoadIdle, Conns: 20, Warm: 100, Rounds: 1})
		add(Case{ID: "idle-http", Scenario: Pinned1, Kind: peers.HTTP, Load: LoadIdle, Conns: 20, Warm: 100, Rounds: 1})
		add(Case{ID: "sys-echo", Scenario: Pinned1, Kind: peers.Echo, Load: LoadSyscalls, Conns: 2, Size: 128, Rounds: 1, Warmup: w, Duration: d})
		add(Case{ID: "sys-http", Scenario: Pinned1, Kind: peers.HTTP, Load: LoadSyscalls, Conns: 2, Rounds: 1, Warmup: w, Duration: d, Only: []string{"net/http"}})
		add(Case{ID: "tls-echo", Scenario: Pinned1, Kind: peers.TLSEcho, Load: LoadEcho, Conns: 2, Size: 1024, Rounds: 1, Warmup: w, Duration: d})
		add(Case{ID: "tls-handshake", Scenario: Pinned1, Kind: peers.TLSEcho, Load: LoadHandshake, Conns: 2, Size: 32, Rounds: 1, Warmup: w, Duration: d, BackendDefault: true})
		add(Case{ID: "tls-idle", Scenario: Pinned1, Kind: peers.TLSEcho, Load: LoadIdle, Conns: 20, Warm: 100, Rounds: 1, BackendDefault: true})
		add(Case{ID: "https", Scenario: Pinned1, Kind: peers.HTTPS, Load: LoadWrk, Conns: 4, Rounds: 1, Duration: time.Second})
		add(Case{ID: "rest-echo", Scenario: Pinned1, Kind: peers.Echo, Load: LoadRest, Rounds: 1, Warmup: 200 * time.Millisecond, Duration: 500 * time.Millisecond})
		add(Case{ID: "ws-echo", Scenario: Pinned1, Kind: peers.WebSocket, Load: LoadEcho, Conns: 2, Size: 128, Rounds: 1, Warmup: w, Duration: d})
		add(Case{ID: "idle-ws", Scenario: Pinned1, Kind: peers.WebSocket, Load: LoadIdle, Conns: 20, Warm: 100, Rounds: 1})
		add(Case{ID: "ws-bcast", Scenario: Pinned1, Kind: peers.WebSocket, Load: LoadBcast, Conns: 20, Size: 128, Rounds: 1, Warmup: w, Duration: d})
		add(Case{ID: "udp-echo", Scenario: Pinned1, Kind: peers.UDPEcho, Load: LoadUDP, Conns: 2, InFlight: 4, Size: 64, Rounds: 1, Warmup: w, Duration: d})
		// HTTP/2 and gRPC: 15 servers, so a tenth of a second each, and
		// the idle holder's h2 against two of them.
		h2d := 100 * time.Millisecond
		add(Case{ID: "h2", Scenario: Pinned1, Kind: peers.H2, Load: LoadH2, Conns: 2, InFlight: 4, Rounds: 1, Duration: h2d})
		add(Case{ID: "h2c", Scenario: Pinned1, Kind: peers.H2C, Load: LoadH2, Conns: 2, InFlight: 4, Rounds: 1, Duration: h2d})
		add(Case{ID: "grpc", Scenario: Pinned1, Kind: peers.GRPC, Load: LoadH2, Conns: 2, InFlight: 4, Rounds: 1, Duration: h2d})
		add(Case{ID: "idle-h2", Scenario: Pinned1, Kind: peers.H2, Load: LoadIdle, Conns: 20, Warm: 100, Rounds: 1, Only: h2Idle[:2]})
		add(Case{ID: "dns", Scenario: Pinned1, Kind: peers.DNS, Load: LoadDNS, Conns: 2, InFlight: 8, Rounds: 1, Duration: d})
	case Quick:
		d, w := 1500*time.Millisecond, 250*time.Millisecond
		add(Case{ID: "p1-echo-c1-128", Scenario: Pinned1, Kind: peers.Echo, Load: LoadEcho, Conns: 1, Size: 128, Rounds: 1, Warmup: w, Duration: d})
		add(Case{ID: "p1-echo-c64-128", Scenario: Pinned1, Kind: peers.Echo, Load: LoadEcho, Conns: 64, Size: 128, Rounds: 1, Warmup: w, Duration: d})
		add(Case{ID: "p1-http-c50", Scenario: Pinned1, Kind: peers.HTTP, Load: LoadWrk, Conns: 50, Rounds: 1, Duration: 2 * time.Second})
		add(Case{ID: "p1-open-c50-70", Scenario: Pinned1, Kind: peers.HTTP, Load: LoadOpenLoop, Conns: 50, Fraction: 0.7, RateFrom: "p1-http-c50", RatePeer: "net/http", Rounds: 1, Warmup: w, Duration: time.Second})
		add(Case{ID: "i2-echo-c1-128", Scenario: InProc2, Kind: peers.Echo, Load: LoadEcho, Conns: 1, Size: 128, Rounds: 1, Warmup: w, Duration: d})
		add(Case{ID: "i2-echo-c64-128", Scenario: InProc2, Kind: peers.Echo, Load: LoadEcho, Conns: 64, Size: 128, Rounds: 1, Warmup: w, Duration: d})
		add(Case{ID: "p1-sys-echo-c64", Scenario: Pinned1, Kind: peers.Echo, Load: LoadSyscalls, Conns: 64, Size: 128, Rounds: 1, Warmup: w, Duration: time.Second})
		add(Case{ID: "p1-idle-echo-10k", Scenario: Pinned1, Kind: peers.Echo, Load: LoadIdle, Conns: 10000, Warm: 10000, Rounds: 1})
		add(Case{ID: "p1-tls-echo-c64-1024", Scenario: Pinned1, Kind: peers.TLSEcho, Load: LoadEcho, Conns: 64, Size: 1024, Rounds: 1, Warmup: w, Duration: d})
		add(Case{ID: "p1-https-c50", Scenario: Pinned1, Kind: peers.HTTPS, Load: LoadWrk, Conns: 50, Rounds: 1, Duration: 2 * time.Second})
		add(Case{ID: "p1-rest-echo", Scenario: Pinned1, Kind: peers.Echo, Load: LoadRest, Rounds: 1, Warmup: time.Second, Duration: 3 * time.Second})
		// The UDP goal's case, one second a row: ~15 s.
		add(Case{ID: "p1-udp-c64-64", Scenario: Pinned1, Kind: peers.UDPEcho, Load: LoadUDP, Conns: 64, InFlight: 8, Size: 64, Rounds: 1, Warmup: w, Duration: time.Second})
	case Full:
		d, w, r := time.Second, 150*time.Millisecond, 5
		// The epoll rows of the adapter and of net/http on netconn run in
		// the cases issue 21's goals read (keep-alive throughput, the 70%
		// open loop, TLS); in the pipelined, 50% open-loop and idle cases
		// only when epoll is the automatic choice: ~2 min less sweep.
		lean := []string{"ringloop-http-adapter-epoll", "net/http-on-ringloop-epoll"}
		for _, n := range []int{1, 64, 256, 1000} {
			for _, size := range []int{128, 1024} {
				add(Case{ID: fmt.Sprintf("p1-echo-c%d-%d", n, size), Scenario: Pinned1, Kind: peers.Echo, Load: LoadEcho, Conns: n, Size: size, Rounds: r, Warmup: w, Duration: d})
			}
		}
		add(Case{ID: "p1-echo-c64-16384", Scenario: Pinned1, Kind: peers.Echo, Load: LoadEcho, Conns: 64, Size: 16384, Rounds: r, Warmup: w, Duration: d})
		for _, n := range []int{1, 64} {
			add(Case{ID: fmt.Sprintf("p1-tls-echo-c%d-1024", n), Scenario: Pinned1, Kind: peers.TLSEcho, Load: LoadEcho, Conns: n, Size: 1024, Rounds: r, Warmup: w, Duration: d})
		}
		// TLS on the loop's goals against net+tls: full handshakes per
		// second (netconn+tls too), and memory per idle TLS connection
		// (looptls and net+tls only: ~11 s a row). Each ringloop family
		// runs its backends' default threading modes only.
		add(Case{ID: "p1-tls-handshake-c16", Scenario: Pinned1, Kind: peers.TLSEcho, Load: LoadHandshake, Conns: 16, Size: 32, Rounds: r, Warmup: w, Duration: d, BackendDefault: true})
		add(Case{ID: "p1-tls-idle-10k", Scenario: Pinned1, Kind: peers.TLSEcho, Load: LoadIdle, Conns: 10000, Warm: 10000, Rounds: 1, BackendDefault: true,
			Only: []string{"net+tls", "looptls-uring", "looptls-epoll"}})
		add(Case{ID: "p1-http-c50", Scenario: Pinned1, Kind: peers.HTTP, Load: LoadWrk, Conns: 50, Rounds: r, Duration: time.Second})
		add(Case{ID: "p1-http-c256", Scenario: Pinned1, Kind: peers.HTTP, Load: LoadWrk, Conns: 256, Rounds: r, Duration: time.Second})
		add(Case{ID: "p1-https-c50", Scenario: Pinned1, Kind: peers.HTTPS, Load: LoadWrk, Conns: 50, Rounds: r, Duration: time.Second})
		add(Case{ID: "p1-http-c256-p16", Scenario: Pinned1, Kind: peers.HTTP, Load: LoadWrk, Conns: 256, Depth: 16, Rounds: r, Duration: time.Second, AutoOnly: lean})
		// Half the slowest peak: every server keeps up, latency compares.
		// 70% of net/http's: the httpserver's p99 goal (a server slower
		// than net/http is overloaded there, and its row shows it).
		add(Case{ID: "p1-open-c50-50", Scenario: Pinned1, Kind: peers.HTTP, Load: LoadOpenLoop, Conns: 50, Fraction: 0.5, RateFrom: "p1-http-c50", Rounds: r, Warmup: w, Duration: time.Second, AutoOnly: lean})
		add(Case{ID: "p1-open-c50-70", Scenario: Pinned1, Kind: peers.HTTP, Load: LoadOpenLoop, Conns: 50, Fraction: 0.7, RateFrom: "p1-http-c50", RatePeer: "net/http", Rounds: r, Warmup: w, Duration: time.Second})
		for _, n := range []int{1, 64, 256} {
			add(Case{ID: fmt.Sprintf("i2-echo-c%d-128", n), Scenario: InProc2, Kind: peers.Echo, Load: LoadEcho, Conns: n, Size: 128, Rounds: r, Warmup: w, Duration: d})
		}
		add(Case{ID: "i2-open-c50-50", Scenario: InProc2, Kind: peers.HTTP, Load: LoadOpenLoop, Conns: 50, Fraction: 0.5, RateFrom: "p1-http-c50", Rounds: r, Warmup: w, Duration: time.Second, AutoOnly: lean})
		for _, n := range []int{1, 64, 256} {
			add(Case{ID: fmt.Sprintf("p2-echo-c%d-128", n), Scenario: Pinned2, Kind: peers.Echo, Load: LoadEcho, Conns: n, Size: 128, Rounds: r, Warmup: w, Duration: d})
		}
		for _, n := range []int{1, 64} {
			add(Case{ID: fmt.Sprintf("p4-echo-c%d-128", n), Scenario: Pinned4, Kind: peers.Echo, Load: LoadEcho, Conns: n, Size: 128, Rounds: r, Warmup: w, Duration: d})
		}
		add(Case{ID: "p2-http-c50", Scenario: Pinned2, Kind: peers.HTTP, Load: LoadWrk, Conns: 50, Rounds: r, Duration: time.Second})
		// System calls per request on io_uring depend on how much each
		// enter batches: one round ranged 3-20× over the kept sweeps
		// (results/history), so these get five and show their range.
		add(Case{ID: "p1-sys-echo-c64", Scenario: Pinned1, Kind: peers.Echo, Load: LoadSyscalls, Conns: 64, Size: 128, Rounds: r, Warmup: w, Duration: time.Second})
		add(Case{ID: "p1-sys-http-c50", Scenario: Pinned1, Kind: peers.HTTP, Load: LoadSyscalls, Conns: 50, Rounds: r, Warmup: w, Duration: time.Second})
		add(Case{ID: "p1-idle-echo-10k", Scenario: Pinned1, Kind: peers.Echo, Load: LoadIdle, Conns: 10000, Warm: 10000, Rounds: 1})
		add(Case{ID: "p1-idle-http-10k", Scenario: Pinned1, Kind: peers.HTTP, Load: LoadIdle, Conns: 10000, Warm: 10000, Rounds: 1, AutoOnly: lean})
		// The goal's 10 s window, three rounds: a row costs 11 s a round. A
		// tick is 10 ms, 0.1% of a core over 10 s: fine enough for a 0.5%
		// bound, but one round is one draw of a few ticks (the kept sweeps
		// ranged 0.1% to 0.4% for the default row), so the report shows
		// the range of three.
		add(Case{ID: "p1-rest-echo", Scenario: Pinned1, Kind: peers.Echo, Load: LoadRest, Rounds: 3, Warmup: time.Second, Duration: 10 * time.Second})
		// WebSocket: ringloop's websocket against gorilla/websocket on
		// net/http, kept lean (~2 min of sweep): the echo case in every row,
		// three rounds; the 10k-connection cases, which spend seconds
		// connecting, with only the automatic row of the family. Idle
		// memory once (it held within 1.5× over the kept sweeps); the
		// broadcast five times over 2 s: one round of 1 s ranged 12.8×-42.7×
		// across the kept sweeps, gorilla's rate being a handful of whole
		// 10,000-delivery broadcasts a second.
		ws := []string{"ringloop-ws-uring", "ringloop-ws-epoll"}
		add(Case{ID: "p1-ws-echo-c64-128", Scenario: Pinned1, Kind: peers.WebSocket, Load: LoadEcho, Conns: 64, Size: 128, Rounds: 3, Warmup: w, Duration: d})
		add(Case{ID: "p1-idle-ws-10k", Scenario: Pinned1, Kind: peers.WebSocket, Load: LoadIdle, Conns: 10000, Warm: 10000, Rounds: 1, AutoOnly: ws})
		add(Case{ID: "p1-ws-bcast-10k-128", Scenario: Pinned1, Kind: peers.WebSocket, Load: LoadBcast, Conns: 10000, Size: 128, Rounds: r, Warmup: 300 * time.Millisecond, Duration: 2 * time.Second, AutoOnly: ws})
		// UDP echo: ringloop's datagram sockets against net.UDPConn, gnet
		// and a recvmmsg/sendmmsg C loop, 8 datagrams in flight per client
		// socket (~4 min of sweep).
		for _, n := range []int{1, 64} {
			for _, size := range []int{64, 1024} {
				add(Case{ID: fmt.Sprintf("p1-udp-c%d-%d", n, size), Scenario: Pinned1, Kind: peers.UDPEcho, Load: LoadUDP, Conns: n, InFlight: 8, Size: size, Rounds: r, Warmup: w, Duration: d})
			}
		}
		// HTTP/2 (issue 43): h2load, 50 connections × 100 streams, over
		// TLS and h2c, and gRPC unary over h2c, three rounds of 10 s; idle
		// h2 connections once, the adapter against net/http (~9 min of
		// sweep).
		for _, k := range []peers.Kind{peers.H2, peers.H2C, peers.GRPC} {
			add(Case{ID: fmt.Sprintf("p1-%s-c50-m100", k), Scenario: Pinned1, Kind: k, Load: LoadH2, Conns: 50, InFlight: 100, Rounds: 3, Duration: 10 * time.Second})
		}
		add(Case{ID: "p1-idle-h2-10k", Scenario: Pinned1, Kind: peers.H2, Load: LoadIdle, Conns: 10000, Warm: 10000, Rounds: 1, Only: h2Idle})
		// DNS (issue 42): examples/dns's server on the loop against
		// miekg/dns's own on net, dnsperf with 4 sockets and 100 queries
		// out, three rounds of 10 s (~3 min of sweep).
		add(Case{ID: dnsCase, Scenario: Pinned1, Kind: peers.DNS, Load: LoadDNS, Conns: 4, InFlight: 100, Rounds: 3, Duration: 10 * time.Second})
	default:
		return nil, fmt.Errorf("runner: unknown mode %q (want quick, full or smoke)", m)
	}
	return cs, nil
}
