package runner

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ringloop/ringloop/bench/peers"
	"github.com/ringloop/ringloop/bench/stats"
	"github.com/ringloop/ringloop/engine"
)

// Baselines are the peers each kind's ratio column divides by: the C server
// is the floor for echo, net/http the declared baseline for HTTP, and net's
// listener the one ringloop's net.Conn is judged against under TLS.
var Baselines = map[string]string{string(peers.Echo): "c-liburing", string(peers.HTTP): "net/http", string(peers.TLSEcho): "net+tls",
	string(peers.HTTPS): "net/http+tls", string(peers.WebSocket): "gorilla", string(peers.UDPEcho): "net-udp",
	string(peers.H2): "net/http+h2", string(peers.H2C): "net/http-h2c", string(peers.GRPC): "grpc-go", string(peers.DNS): dnsBaseline}

// udpFloor is the UDP echo tables' second yardstick for CPU per datagram:
// the plain recvmmsg/sendmmsg C loop.
const udpFloor = "c-mmsg"

// ownSections are the kinds whose cases the report gathers under a heading
// of their own rather than under their scenario's.
var ownSections = []struct {
	kind  peers.Kind
	title string
}{
	{peers.TLSEcho, "TLS echo: crypto/tls 1.3 on the loop (looptls), over ringloop's net.Conn (netconn) and over net's: records, full handshakes, idle connections"},
	{peers.HTTPS, "HTTPS: httpserver with TLS 1.3 on the loop (looptls) and net/http over crypto/tls"},
	{peers.WebSocket, "WebSocket: ringloop's websocket on one loop and gorilla/websocket on net/http"},
	{peers.UDPEcho, "UDP echo: ringloop's datagram sockets, net.UDPConn, gnet and a recvmmsg/sendmmsg C loop"},
	{peers.H2, "HTTP/2 over TLS: httpserver's fast API and adapter against net/http's HTTP/2 (h2load)"},
	{peers.H2C, "HTTP/2 in clear (h2c, prior knowledge): httpserver's fast API and adapter against net/http's (h2load)"},
	{peers.GRPC, "gRPC unary over h2c: grpc-go's ServeHTTP on httpserver's adapter against grpc-go's own server on net and on netconn (h2load)"},
	{peers.DNS, "DNS: examples/dns's server on the loop against miekg/dns's own server on net, same zone and answers (dnsperf)"},
}

func ownSection(kind string) bool {
	for _, s := range ownSections {
		if string(s.kind) == kind {
			return true
		}
	}
	return false
}

// NewReport wraps results with the machine and the knobs.
func NewReport(mode Mode, command string, cfg Config, cases []Case, results []CaseResult) Report {
	rep := Report{
		Date:    time.Now().UTC().Format("2006-01-02 15:04 MST"),
		Command: command,
		Mode:    string(mode),
		Machine: machine(cfg),
		Knobs: map[string]string{
			"server cpu": cfg.ServerCPU, "client cpu": cfg.ClientCPU,
			"echo client":       "benchclient echo: one goroutine per connection, write L bytes, read L back, repeat; HdrHistogram",
			"tls echo":          "benchclient echo -tls: the echo client inside TLS 1.3 (crypto/tls, certificate unchecked), every handshake done before the clock starts; the servers make a self-signed ECDSA P-256 certificate at start",
			"http load":         "wrk -t1 (closed loop; pipelining through scripts/pipeline.lua) and benchclient http (open loop, latency from the intended send time)",
			"cpu, ctx switches": "server process: utime+stime from /proc/PID/stat, context switches summed over /proc/PID/task/*/status, over the whole client run (warm-up included), divided by every request it completed",
			"allocs":            "Go servers: runtime.MemStats.Mallocs delta over the run / requests (in-process rows: server and clients together)",
			"at rest":           "no client at all: the server settles for the case's warm-up after its banner, then utime+stime over the window (10 ms ticks) as % of one core of wall time, threads (entries of /proc/PID/task) at the end and their net change over the window, voluntary context switches (summed over threads) per second",
			"websocket":         "benchclient echo -ws: the echo client over WebSocket (handshake before the clock, each message one masked binary frame); benchclient broadcast: N connections join /bcast, the first sends 128 B messages carrying their send time, each broadcast by the server to all N, the next sent once every member has the one 16 back; rate = deliveries/s, latency = send to each arrival; idle -ws: handshake and one message per connection",
			"rss per idle conn": "server VmRSS growth while N connections each make one exchange and go idle, / N; measured after a warm-up connection made as many exchanges, so fixed buffer pools are already resident. TLS: each connection completes a full TLS 1.3 handshake first (16 at a time), and the warm-up makes 100 full handshakes before its exchanges",
			"udp echo":          "benchclient udp: N connected client sockets, one goroutine each, keeping 8 datagrams of L bytes out at the server (each carries its number and send time) and sending the next as each comes back; a datagram unanswered for 200 ms (after what the client socket holds is read) is counted lost and replaced, the last ones after the window get 1 s; rate = echoes/s, costs per datagram echoed (one received and one sent by the server); latency = from the send to the client goroutine's read of the echo, so where a server outpaces the client (the faster rows) its p99 is mostly echoes waiting in the client's own sockets for Go's scheduler to poll them; lost = never came back, over the whole run; RcvbufErrors = the rise of /proc/net/snmp's Udp RcvbufErrors over the run (every UDP socket of the host: other UDP traffic during the run counts too); every server asks for 4 MiB SO_RCVBUF and SO_SNDBUF (the kernel caps it at rmem_max/wmem_max and doubles it); net.UDPConn is one socket served by one goroutine (ReadFromUDPAddrPort, WriteToUDPAddrPort)",
			"h2load":            "h2load -t1 -c CONNS -m STREAMS -D DURATION (nghttp2's client, one thread, pinned as wrk is): GET /plaintext over HTTP/2, over TLS 1.3 (ALPN h2; h2load checks no certificate) or in clear with prior knowledge; gRPC: a POST of one prepared unary request (content-type application/grpc, te trailers) over h2c; a round whose answers carry fewer body bytes than the plaintext body (or the gRPC message) each fails; rate = requests/s as h2load reports it, costs per request that succeeded; a failed, errored, timed-out or non-2xx request fails the round; h2load gives no percentiles (n/a); ringloop rows in their backend's default threading mode. Idle h2: each connection a full TLS 1.3 handshake negotiating h2 and one GET over HTTP/2, the warm-up 100 such connections and then its exchanges on one",
			"dnsperf":           "dnsperf -T 1 -c CLIENTS -q OUTSTANDING -l DURATION (DNS-OARC's dnsperf, one thread, pinned as wrk is) over UDP, the queries of scripts/dns-queries.txt in turn (A, AAAA and TXT records, and names the zone lacks: NXDOMAIN) against examples/dns's test zone; every server keeps the kernel's default socket buffers; rate = queries answered per second as dnsperf reports it, costs per query answered, queries per CPU-second = 10^6 ÷ CPU µs per query; lost = dnsperf's count of queries unanswered after its 5 s timeout; RcvbufErrors as for UDP echo; an answer with a response code other than NOERROR or NXDOMAIN fails the round; dnsperf gives a mean latency only, which at a fixed number of queries outstanding is that number over the rate, so no latency columns",
			"tls handshakes":    "benchclient handshake: N dialers, each dialing, completing a full TLS 1.3 handshake (a fresh tls.Config per connection, no session cache: no resumption), echoing 32 bytes (so the server's side is done too) and closing with close_notify, again and again; handshakes/s over the measured window, latency from dial to echo received, costs per handshake (warm-up included); ringloop rows in their backend's default threading mode",
		},
	}
	seen := map[string]bool{}
	for _, c := range cases {
		if !seen[c.Scenario.ID] {
			seen[c.Scenario.ID] = true
			rep.Scenarios = append(rep.Scenarios, c.Scenario)
		}
	}
	rep.Cases = results
	rep.Auto = cfg.Auto
	if cfg.Auto.Known() {
		rep.Machine["ringloop auto backend"] = cfg.Auto.String()
	}
	rep.DefaultVsBest = DefaultVsBestRows(rep)
	rep.UringVsEpoll = UringVsEpollRows(rep)
	rep.ConfigScores = ConfigScores(rep)
	rep.Machine["load average at the end"] = LoadAverage()
	return rep
}

// LoadAverage is the 1-minute load average: above the CPU count, other work
// was competing with the run.
func LoadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	if f := strings.Fields(string(b)); len(f) > 0 {
		return f[0]
	}
	return "unknown"
}

// machine describes where the run happened.
func machine(cfg Config) map[string]string {
	m := map[string]string{
		"cpus":                      fmt.Sprint(runtime.NumCPU()),
		"go":                        runtime.Version(),
		"load average at the start": cfg.LoadAtStart,
		"kernel":                    strings.TrimSpace(cmdOut("uname", "-r")),
	}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for line := range strings.Lines(string(b)) {
			if v, ok := strings.CutPrefix(line, "model name"); ok {
				m["cpu"] = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(v), ":"))
				break
			}
		}
	}
	m["liburing"] = strings.TrimSpace(cmdOut("dpkg-query", "-W", "-f", "${Version}", "liburing-dev"))
	m["wrk"] = strings.TrimSpace(cmdOut("dpkg-query", "-W", "-f", "${Version}", "wrk"))
	if l, err := engine.New(); err == nil {
		m["ringloop auto backend"] = l.Backend().Name.String() + ": " + l.Backend().Reason
		_ = l.Close()
	} else {
		m["ringloop auto backend"] = "error: " + err.Error()
	}
	if h, err := os.Hostname(); err == nil {
		m["host"] = h
	}
	return m
}

func cmdOut(name string, args ...string) string {
	out, err := exec.Command(name, args...).Output()
	if err != nil {
		return "unknown"
	}
	return string(out)
}

// Write stores the report as latest.json and latest.md in dir, keeps the
// JSON in dir/history too (keepHistory), and returns the markdown.
func Write(dir string, rep Report) (string, error) {
	if _, err := HistoryName(rep); err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	js, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return "", err
	}
	js = append(js, '\n')
	if err := os.WriteFile(filepath.Join(dir, "latest.json"), js, 0o644); err != nil {
		return "", err
	}
	if err := keepHistory(dir, rep, js); err != nil {
		return "", err
	}
	md := Markdown(rep)
	return md, os.WriteFile(filepath.Join(dir, "latest.md"), []byte(md), 0o644)
}

// ReadReport reads a report Write wrote and derives its comparisons again
// (DefaultVsBest, UringVsEpoll, ConfigScores) from its rows, so that a
// change in how they are made applies to measurements already taken.
func ReadReport(file string) (Report, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return Report{}, err
	}
	var rep Report
	if err := json.Unmarshal(b, &rep); err != nil {
		return Report{}, fmt.Errorf("%s: %w", file, err)
	}
	rep.DefaultVsBest = DefaultVsBestRows(rep)
	rep.UringVsEpoll = UringVsEpollRows(rep)
	rep.ConfigScores = ConfigScores(rep)
	return rep, nil
}

// Markdown renders the report's tables.
func Markdown(rep Report) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# ringloop bench (%s)\n\n", rep.Mode)
	fmt.Fprintf(&b, "%s, `%s`. %s CPUs (%s), Linux %s, %s, liburing %s, wrk %s. %s. %s\n\n",
		rep.Date, rep.Command, rep.Machine["cpus"], rep.Machine["cpu"], rep.Machine["kernel"], rep.Machine["go"],
		rep.Machine["liburing"], rep.Machine["wrk"], "ringloop's automatic choice here: "+rep.Machine["ringloop auto backend"], loadNote(rep))
	b.WriteString("Medians over the rounds with the min–max in brackets; peers alternate A B C, A B C within a case. " +
		"Ratios divide medians by the baseline's in the same case (echo: the C liburing server; HTTP: net/http; TLS echo: net+tls; WebSocket: gorilla; UDP echo: net.UDPConn, and CPU also by the recvmmsg/sendmmsg C loop's; HTTP/2: net/http's own, over TLS or h2c; gRPC: grpc-go's own server; DNS: miekg/dns's own server). " +
		"Costs are the server process's, per request. n/a: the figure does not exist for that peer or load. " +
		"[default]: the row of each ringloop family that runs what `engine.New()` picks here with no options and no environment.\n\n")
	b.WriteString("Chart: [latest.png](latest.png) (case ids: p1 = cross-process pinned, GOMAXPROCS=1; i2 = in-process, " +
		"GOMAXPROCS=2; p2, p4 = cross-process pinned, GOMAXPROCS=2 or 4; cN = N connections; then message bytes, or pN = pipelined N deep, " +
		"or the open loop's % of the slowest peak).\n\n")
	if h := Headline(rep); h != "" {
		b.WriteString(h + "\n")
	}
	if g := Goals(rep); g != "" {
		b.WriteString(g + "\n")
	}
	if t := DefaultVsBestTable(rep); t != "" {
		fmt.Fprintf(&b, "## %s\n\n%s\n", DefaultVsBestTitle, t)
	}
	if t := ConfigScoresTable(rep); t != "" {
		fmt.Fprintf(&b, "## %s\n\n%s\n", ConfigScoresTitle, t)
	}
	if t := UringVsEpollTable(rep); t != "" {
		fmt.Fprintf(&b, "## %s\n\n%s\n", UringVsEpollTitle, t)
	}
	for _, sc := range rep.Scenarios {
		var in []CaseResult
		for _, cr := range rep.Cases {
			if cr.Scenario == sc.ID && !ownSection(cr.Kind) {
				in = append(in, cr)
			}
		}
		if len(in) == 0 {
			continue
		}
		fmt.Fprintf(&b, "## %s\n\n", sc.Title)
		for _, cr := range in {
			caseTable(&b, cr)
		}
	}
	for _, s := range ownSections {
		heading := false
		for _, cr := range rep.Cases {
			if cr.Kind != string(s.kind) {
				continue
			}
			if !heading {
				heading = true
				fmt.Fprintf(&b, "## %s\n\n", s.title)
			}
			// The case's scenario goes under its heading, as its note.
			cr.Note = strings.TrimSuffix(scenarioTitle(rep, cr.Scenario)+". "+cr.Note, ". ")
			caseTable(&b, cr)
		}
	}
	b.WriteString("## How figures were obtained\n\n")
	for _, k := range sortedKeys(rep.Knobs) {
		fmt.Fprintf(&b, "- %s: %s\n", k, rep.Knobs[k])
	}
	return b.String()
}

// scenarioTitle is the title of the scenario with the given id.
func scenarioTitle(rep Report, id string) string {
	for _, s := range rep.Scenarios {
		if s.ID == id {
			return s.Title
		}
	}
	return id
}

// loadNote says how busy the machine was around the run.
func loadNote(rep Report) string {
	note := fmt.Sprintf("Load average (1 min) %s at the start, %s at the end, on %s CPUs",
		rep.Machine["load average at the start"], rep.Machine["load average at the end"], rep.Machine["cpus"])
	start, err1 := strconv.ParseFloat(rep.Machine["load average at the start"], 64)
	cpus, err2 := strconv.ParseFloat(rep.Machine["cpus"], 64)
	if err1 == nil && err2 == nil && start > cpus {
		return note + ": above the CPU count, other work competed with the run."
	}
	return note + "."
}

// Headline is one verdict line per ringloop row (netconn's included) of the
// pinned echo, TLS echo and HTTP cases: its ratio to the case's baseline and
// to every other peer that is not ringloop's, in the case's order; a peer
// without a figure says so and why instead of dropping out of the line.
func Headline(rep Report) string {
	var b strings.Builder
	for _, cr := range rep.Cases {
		if cr.Scenario != Pinned1.ID || (cr.Load != string(LoadEcho) && cr.Load != string(LoadWrk)) {
			continue
		}
		for _, row := range cr.Rows {
			if !ringloopRow(row) {
				continue
			}
			if !row.Rate.Valid() {
				fmt.Fprintf(&b, "- %s, %s: not measured (%s)\n", cr.Title, name(row), why(row))
				continue
			}
			if parts := peerParts(cr, row); len(parts) > 0 {
				fmt.Fprintf(&b, "- %s, %s: %s\n", cr.Title, name(row), strings.Join(parts, ", "))
			}
		}
	}
	if b.Len() == 0 {
		return ""
	}
	return "Headline (throughput ratios, cross-process, pinned, GOMAXPROCS=1):\n\n" + b.String()
}

// otherPeers lists the case's peers that are not ringloop's, its baseline first
// and then in the case's order, each once.
func otherPeers(cr CaseResult) []Row {
	var out []Row
	add := func(r Row) {
		if !slices.ContainsFunc(out, func(o Row) bool { return o.Peer == r.Peer }) {
			out = append(out, r)
		}
	}
	for _, r := range cr.Rows {
		if r.Peer == Baselines[cr.Kind] && !ringloopRow(r) {
			add(r)
		}
	}
	for _, r := range cr.Rows {
		if !ringloopRow(r) {
			add(r)
		}
	}
	return out
}

// peerParts is row's rate against each of otherPeers: "1.07× gnet", or
// "not measured (why) gnet" for a peer the case has no figure of.
func peerParts(cr CaseResult, row Row) []string {
	var parts []string
	for _, o := range otherPeers(cr) {
		if x, ok := ratio(cr, row, o.Peer); ok {
			parts = append(parts, fmt.Sprintf("%.2f× %s", x, o.Peer))
		} else {
			parts = append(parts, fmt.Sprintf("%s not measured (%s)", o.Peer, why(o)))
		}
	}
	return parts
}

// why is the short reason a row has no figure: its error's first round's
// cause, on one line, safe in a table cell and cut at 100 bytes.
func why(r Row) string {
	e := r.Error
	if e == "" {
		return "no figure"
	}
	if i := strings.Index(e, "; round 1: "); i >= 0 {
		e = e[i+len("; round 1: "):]
	}
	e = strings.ReplaceAll(strings.ReplaceAll(e, "|", "/"), "\n", " ")
	if len(e) > 100 {
		e = strings.ToValidUTF8(e[:100], "") + "…"
	}
	return e
}

// ringloopRow reports whether a row is one of ringloop's servers.
func ringloopRow(r Row) bool {
	return r.Family != "" || strings.HasPrefix(r.Peer, "ringloop") || strings.HasPrefix(r.Peer, "netconn")
}

// name is a row's label as the tables show it: the automatic default's
// row is marked.
func name(r Row) string {
	if r.Default {
		return r.Label + " [default]"
	}
	return r.Label
}

// ratio divides row's median rate by peer other's in the same case.
func ratio(cr CaseResult, row Row, other string) (float64, bool) {
	for _, o := range cr.Rows {
		if o.Peer == other && o.Rate.Valid() && row.Rate.Valid() && o.Rate.Median > 0 {
			return float64(row.Rate.Median / o.Rate.Median), true
		}
	}
	return 0, false
}

// figureRatio divides row's median figure f by peer other's in the same
// case.
func figureRatio(cr CaseResult, row Row, other string, f func(Row) stats.Spread) (float64, bool) {
	for _, o := range cr.Rows {
		if o.Peer == other && f(o).Valid() && f(row).Valid() && f(o).Median > 0 {
			return float64(f(row).Median / f(o).Median), true
		}
	}
	return 0, false
}

func caseTable(b *strings.Builder, cr CaseResult) {
	fmt.Fprintf(b, "### %s (`%s`)\n\n", cr.Title, cr.ID)
	if cr.Note != "" {
		fmt.Fprintf(b, "%s.\n\n", cr.Note)
	}
	switch cr.Load {
	case string(LoadIdle):
		base := Baselines[cr.Kind]
		fmt.Fprintf(b, "| peer | backend | threading | RSS per idle connection | × %s |\n|---|---|---|---|---|\n", base)
		for _, r := range cr.Rows {
			rat := "n/a"
			if x, ok := figureRatio(cr, r, base, func(r Row) stats.Spread { return r.RSSPerConn }); ok {
				rat = fmt.Sprintf("%.2f", x)
			}
			fmt.Fprintf(b, "| %s | %s | %s | %s | %s |\n", name(r), dash(r.Backend), dash(r.Threading), orErr(r, fmtBytes(r.RSSPerConn)), rat)
		}
	case string(LoadRest):
		b.WriteString("| peer | backend | threading | CPU % of a core | threads | new threads | wakeups/s |\n|---|---|---|---|---|---|---|\n")
		for _, r := range cr.Rows {
			fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s | %s |\n", name(r), dash(r.Backend), dash(r.Threading),
				orErr(r, fmtNum(r.RestCPU, 2)), fmtNum(r.Threads, 0), fmtNum(r.NewThreads, 0), fmtNum(r.WakeupsPerS, 1))
		}
	case string(LoadSyscalls):
		b.WriteString("| peer | backend | threading | system calls per request | counted with |\n|---|---|---|---|---|\n")
		for _, r := range cr.Rows {
			note := "—"
			if len(r.Rounds) > 0 && r.Rounds[0].Note != "" {
				note = strings.TrimPrefix(r.Rounds[0].Note, "counted with ")
			}
			fmt.Fprintf(b, "| %s | %s | %s | %s | %s |\n", name(r), dash(r.Backend), dash(r.Threading), orErr(r, fmtSpread(r.Syscalls, 2)), note)
		}
	case string(LoadDNS):
		dnsTable(b, cr)
	case string(LoadUDP):
		base := Baselines[cr.Kind]
		fmt.Fprintf(b, "| peer | backend | threading | GOMAXPROCS | datagrams/s | × %s | p50 µs | p99 µs | CPU µs/dgram | CPU × %s | CPU × %s | lost | RcvbufErrors | allocs/dgram |\n", base, base, udpFloor)
		b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
		cpu := func(r Row) stats.Spread { return r.CPUPerReq }
		for _, r := range cr.Rows {
			rat, cb, cf := "n/a", "n/a", "n/a"
			if x, ok := ratio(cr, r, base); ok {
				rat = fmt.Sprintf("%.2f", x)
			}
			if x, ok := figureRatio(cr, r, base, cpu); ok {
				cb = fmt.Sprintf("%.2f", x)
			}
			if x, ok := figureRatio(cr, r, udpFloor, cpu); ok {
				cf = fmt.Sprintf("%.2f", x)
			}
			fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n",
				name(r), dash(r.Backend), dash(r.Threading), dash(r.GOMAXPROCS), orErr(r, fmtSpread(r.Rate, 0)), rat,
				fmtSpread(r.P50, 0), fmtSpread(r.P99, 0), fmtNum(r.CPUPerReq, 2), cb, cf, fmtSpread(r.Lost, 0), fmtSpread(r.RcvbufErrors, 0), fmtNum(r.Allocs, 2))
		}
	default:
		unit, per := "msgs/s", "req"
		switch {
		case cr.Load == string(LoadHandshake):
			unit, per = "handshakes/s", "hs"
		case cr.Kind == string(peers.HTTP) || cr.Kind == string(peers.HTTPS) || cr.Kind == string(peers.H2) || cr.Kind == string(peers.H2C) || cr.Kind == string(peers.GRPC):
			unit = "req/s"
		}
		if cr.Load == string(LoadBcast) {
			unit = "deliveries/s"
		}
		base := Baselines[cr.Kind]
		fmt.Fprintf(b, "| peer | backend | threading | GOMAXPROCS | %s | × %s | p50 µs | p99 µs | p99.9 µs | CPU µs/%s | vcsw/%s | ivcsw/%s | allocs/%s |\n",
			unit, base, per, per, per, per)
		b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
		for _, r := range cr.Rows {
			rat := "n/a"
			if x, ok := ratio(cr, r, base); ok {
				rat = fmt.Sprintf("%.2f", x)
			}
			fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n",
				name(r), dash(r.Backend), dash(r.Threading), dash(r.GOMAXPROCS), orErr(r, fmtSpread(r.Rate, 0)), rat,
				fmtSpread(r.P50, 0), fmtSpread(r.P99, 0), fmtNum(r.P999, 0), fmtNum(r.CPUPerReq, 2), fmtNum(r.VolPerReq, 3),
				fmtNum(r.InvolPerReq, 3), fmtNum(r.Allocs, 2))
		}
	}
	for _, r := range cr.Rows {
		if r.Error != "" && r.Rate.Valid() {
			fmt.Fprintf(b, "\n%s: %s", name(r), r.Error)
		}
	}
	b.WriteString("\n")
}

// orErr shows a row's figure, or why it has none.
func orErr(r Row, s string) string {
	if s != "n/a" || r.Error == "" {
		return s
	}
	e := r.Error
	if i := strings.Index(e, "; round 1: "); i >= 0 {
		e = e[i+len("; round 1: "):]
	}
	e = strings.ReplaceAll(e, "|", "/")
	e = strings.ReplaceAll(e, "\n", " ")
	if len(e) > 160 {
		e = e[:160] + "…"
	}
	return "**not run**: " + e
}

func dash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

func fmtSpread(s stats.Spread, prec int) string {
	if !s.Valid() {
		return "n/a"
	}
	if s.Min == s.Max {
		return group(float64(s.Median), prec)
	}
	return fmt.Sprintf("%s (%s–%s)", group(float64(s.Median), prec), group(float64(s.Min), prec), group(float64(s.Max), prec))
}

func fmtNum(s stats.Spread, prec int) string {
	if !s.Valid() {
		return "n/a"
	}
	return group(float64(s.Median), prec)
}

func fmtBytes(s stats.Spread) string {
	if !s.Valid() {
		return "n/a"
	}
	return fmt.Sprintf("%.2f KB", float64(s.Median)/1000)
}

// group formats x with prec decimals and thousands separators.
func group(x float64, prec int) string {
	s := fmt.Sprintf("%.*f", prec, math.Abs(x))
	intPart, frac, _ := strings.Cut(s, ".")
	var out []byte
	for i := range intPart {
		if i > 0 && (len(intPart)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, intPart[i])
	}
	if frac != "" {
		out = append(append(out, '.'), frac...)
	}
	if x < 0 {
		return "-" + string(out)
	}
	return string(out)
}

func sortedKeys(m map[string]string) []string { return slices.Sorted(maps.Keys(m)) }
