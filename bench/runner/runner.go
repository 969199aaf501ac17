package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/ringloop/ringloop/bench/client"
	"github.com/ringloop/ringloop/bench/peers"
	"github.com/ringloop/ringloop/bench/proc"
	"github.com/ringloop/ringloop/bench/stats"
)

// Config says where the runner works and how it reports progress.
type Config struct {
	Root      string    // the bench module's directory
	Bin       string    // where binaries are built
	Log       io.Writer // progress lines (nil: none)
	ServerCPU string    // taskset list for pinned servers ("0")
	ClientCPU string    // and their clients ("1")
	Peers     []string  // only these peers (nil: all)
	// LoadAtStart is the load average when the run began (New reads it).
	LoadAtStart string
	// Auto is the library's automatic choice on this machine (Build asks
	// the benchserver it built).
	Auto Auto
}

// Runner builds the peers once and runs cases against them.
type Runner struct {
	Config
	buildErr map[string]error // peer name (or "benchserver", "benchclient") -> why it did not build
}

// variant is one row's peer: a peer in one threading mode.
type variant struct {
	peer  peers.Peer
	mode  string
	label string
}

// New returns a runner; Build must run before Run.
func New(c Config) *Runner {
	if c.ServerCPU == "" {
		c.ServerCPU = "0"
	}
	if c.ClientCPU == "" {
		c.ClientCPU = "1"
		if runtime.NumCPU() < 2 { // one core: "pinned" shares it (the report says which)
			c.ClientCPU = "0"
		}
	}
	if c.Log == nil {
		c.Log = io.Discard
	}
	if c.LoadAtStart == "" {
		c.LoadAtStart = LoadAverage()
	}
	return &Runner{Config: c, buildErr: map[string]error{}}
}

func (r *Runner) logf(format string, a ...any) { fmt.Fprintf(r.Log, format+"\n", a...) }

func (r *Runner) bin(name string) string { return filepath.Join(r.Bin, name) }

func (r *Runner) programPath(p peers.Peer) string {
	return r.bin(strings.TrimSuffix(filepath.Base(p.Program.Source), filepath.Ext(p.Program.Source)))
}

// Build compiles the Go server and client and every program peer. A peer
// that does not build is remembered: its rows say why.
func (r *Runner) Build(ctx context.Context) error {
	if err := os.MkdirAll(r.Bin, 0o755); err != nil {
		return err
	}
	for _, cmd := range []string{"benchserver", "benchclient"} {
		r.logf("build %s", cmd)
		c := exec.CommandContext(ctx, "go", "build", "-o", r.bin(cmd), "./cmd/"+cmd)
		c.Dir = r.Root
		if out, err := c.CombinedOutput(); err != nil {
			r.buildErr[cmd] = fmt.Errorf("go build %s: %v: %s", cmd, err, strings.TrimSpace(string(out)))
		}
	}
	if err := r.buildErr["benchclient"]; err != nil {
		return err // nothing can be measured without the client
	}
	if err := r.buildErr["benchserver"]; err != nil {
		r.Auto = Auto{Err: err.Error()}
	} else {
		r.Auto = r.probeAuto(ctx)
	}
	r.logf("automatic choice: %s", r.Auto)
	for _, p := range peers.All("") {
		if p.Program == nil || len(r.Peers) > 0 && !contains(r.Peers, p.Name) {
			continue
		}
		r.logf("build %s", p.Name)
		var argv []string
		for _, a := range p.Program.Build {
			a = strings.ReplaceAll(a, "$OUT", r.programPath(p))
			a = strings.ReplaceAll(a, "$SRC", filepath.Join(r.Root, p.Program.Source))
			argv = append(argv, a)
		}
		if out, err := exec.CommandContext(ctx, argv[0], argv[1:]...).CombinedOutput(); err != nil {
			r.buildErr[p.Name] = fmt.Errorf("%s: %v: %s", strings.Join(argv, " "), err, strings.TrimSpace(string(out)))
		}
	}
	return nil
}

// variants lists the rows of kind k: each peer once per threading mode.
func (r *Runner) variants(k peers.Kind) []variant {
	var out []variant
	for _, p := range peers.All(k) {
		if len(r.Peers) > 0 && !contains(r.Peers, p.Name) {
			continue
		}
		if p.Modes == nil {
			out = append(out, variant{p, "", p.Name})
			continue
		}
		for _, m := range p.Modes() {
			out = append(out, variant{p, m, p.Name + " (" + m + ")"})
		}
	}
	return out
}

// caseVariants lists the rows of case c.
func (r *Runner) caseVariants(c Case) []variant {
	var out []variant
	for _, v := range r.variants(c.Kind) {
		if c.Only != nil && !contains(c.Only, v.peer.Name) {
			continue
		}
		if contains(c.AutoOnly, v.peer.Name) && !r.Auto.Picks(v.peer.Backend, v.mode) {
			continue
		}
		if c.BackendDefault && !backendDefaultMode(v) {
			continue
		}
		out = append(out, v)
	}
	return out
}

// backendDefaultMode reports whether v runs in the threading mode its
// backend defaults to; a peer that is no ringloop family's always does.
func backendDefaultMode(v variant) bool {
	if v.peer.Family == "" {
		return true
	}
	return BackendDefault(Row{Backend: v.peer.Backend, Family: v.peer.Family, Threading: v.mode})
}

func contains(s []string, x string) bool {
	for _, y := range s {
		if y == x {
			return true
		}
	}
	return false
}

// Run runs the cases in order, every peer of a case's kind in alternating
// rounds, and returns their results.
func (r *Runner) Run(ctx context.Context, cases []Case) []CaseResult {
	var out []CaseResult
	for _, c := range cases {
		cr := CaseResult{ID: c.ID, Title: c.Title(), Scenario: c.Scenario.ID, Kind: string(c.Kind), Load: string(c.Load),
			Conns: c.Conns, Size: c.Size, Depth: c.Depth, InFlight: c.InFlight, Rounds: c.Rounds, Warmup: c.Warmup.String(), Duration: c.Duration.String()}
		if c.Load == LoadOpenLoop {
			cr.Rate, cr.Note = openLoopRate(out, c)
		}
		vs := r.caseVariants(c)
		if len(vs) == 0 {
			cr.Note = "no peers of this kind are registered"
			if len(r.Peers) > 0 {
				cr.Note = "none of the peers chosen (" + strings.Join(r.Peers, ", ") + ") is of this kind"
			}
		}
		rows := make([]Row, len(vs))
		for i, v := range vs {
			rows[i] = r.newRow(v)
		}
		for round := range c.Rounds {
			for i, v := range vs { // A B C, A B C, ...
				r.logf("%-18s round %d/%d  %s", c.ID, round+1, c.Rounds, v.label)
				rd := r.measure(ctx, c, cr.Rate, v, &rows[i])
				if rd.Err != "" {
					r.logf("    %s", rd.Err)
				}
				rows[i].Rounds = append(rows[i].Rounds, rd)
			}
		}
		for i := range rows {
			rows[i].summarize()
			var errs []string
			for n, rd := range rows[i].Rounds {
				if rd.Err != "" {
					errs = append(errs, fmt.Sprintf("round %d: %s", n+1, rd.Err))
				}
			}
			if len(errs) > 0 {
				rows[i].Error = fmt.Sprintf("%d of %d rounds failed; %s", len(errs), len(rows[i].Rounds), errs[0])
			}
		}
		cr.Rows = rows
		out = append(out, cr)
	}
	return out
}

// newRow is variant v's row before it runs: its backend is the one its
// peer forces until its banner says, and a ringloop family's row in the
// automatic configuration is marked as the default.
func (r *Runner) newRow(v variant) Row {
	return Row{Peer: v.peer.Name, Label: v.label, Threading: v.mode, Backend: v.peer.Backend, Family: v.peer.Family,
		Default: v.peer.Family != "" && r.Auto.Picks(v.peer.Backend, v.mode)}
}

// openLoopRate is the open-loop arrival rate: a fraction of the median
// throughput, in the wrk case the open-loop case names, of its RatePeer or
// else of the slowest peer.
func openLoopRate(done []CaseResult, c Case) (float64, string) {
	peak := math.Inf(1)
	for _, cr := range done {
		if cr.ID != c.RateFrom {
			continue
		}
		for _, row := range cr.Rows {
			if row.Rate.Valid() && (c.RatePeer == "" || row.Peer == c.RatePeer) {
				peak = min(peak, float64(row.Rate.Median))
			}
		}
	}
	whose := "the slowest median"
	if c.RatePeer != "" {
		whose = c.RatePeer + "'s median"
	}
	if math.IsInf(peak, 1) {
		const fallback = 1000
		return fallback, fmt.Sprintf("no peak (%s) from %s: fixed %d req/s", whose, c.RateFrom, fallback)
	}
	rate := math.Round(peak * c.Fraction)
	return rate, fmt.Sprintf("%.0f req/s = %.0f%% of %s in %s (%.0f req/s)", rate, c.Fraction*100, whose, c.RateFrom, peak)
}

// wrkLatency is a latency wrk printed, or missing when it printed 0: in
// pipelined runs wrk printed 0 µs percentiles for some rounds (seen in the
// 2026-11-23 sweep), and no request takes no time.
func wrkLatency(us float64) stats.Num {
	if us <= 0 {
		return stats.Num(math.NaN())
	}
	return stats.Num(us)
}

// measure runs one round of one peer.
func (r *Runner) measure(ctx context.Context, c Case, rate float64, v variant, row *Row) Round {
	rd := nanRound()
	if err := r.buildErr[v.peer.Name]; err != nil {
		rd.Err = "cannot build: " + err.Error()
		return rd
	}
	if v.peer.Program == nil {
		if err := r.buildErr["benchserver"]; err != nil {
			rd.Err = "cannot build: " + err.Error()
			return rd
		}
	}
	var err error
	switch {
	case c.Scenario.InProc:
		err = r.inProc(ctx, c, rate, v, row, &rd)
	default:
		err = r.crossProcess(ctx, c, rate, v, row, &rd)
	}
	if err != nil {
		rd.Err = err.Error()
	}
	return rd
}

// crossProcess measures a server in its own process against a client in
// another (both pinned when the scenario says so).
func (r *Runner) crossProcess(ctx context.Context, c Case, rate float64, v variant, row *Row, rd *Round) error {
	if c.Load == LoadWrk || c.Load == LoadSyscalls && c.Kind == peers.HTTP {
		if _, err := exec.LookPath("wrk"); err != nil {
			return errors.New("wrk is not installed (make deps installs it)")
		}
	}
	srv, err := r.startServer(ctx, v, c.Scenario)
	if err != nil {
		return err
	}
	row.Backend, row.Threading, row.GOMAXPROCS, row.Detail = srv.kv["backend"], srv.kv["threading"], srv.kv["gomaxprocs"], srv.kv["detail"]
	if row.Detail == "" && srv.kv["setup"] != "" {
		row.Detail = "setup: " + srv.kv["setup"]
	}
	err = r.drive(ctx, c, rate, srv, rd)
	if serr := srv.stop(); err == nil && serr != nil {
		err = fmt.Errorf("server: %v", serr)
	}
	return err
}

// wrap pins a client command to the client core when the scenario pins.
func (r *Runner) wrap(c Case) []string {
	if c.Scenario.Pinned {
		return []string{"taskset", "-c", r.ClientCPU}
	}
	return nil
}

func (r *Runner) drive(ctx context.Context, c Case, rate float64, srv *server, rd *Round) error {
	pid := srv.pid()
	switch c.Load {
	case LoadIdle:
		return r.idle(ctx, c, srv, rd)
	case LoadSyscalls:
		return r.syscalls(ctx, c, srv, rd)
	case LoadRest:
		return rest(ctx, c, srv.pid(), rd)
	}
	s0, err := proc.Read(pid)
	if err != nil {
		return err
	}
	m0, haveAllocs := srv.mallocs(ctx)
	var total float64
	switch c.Load {
	case LoadEcho:
		var res client.EchoResult
		if err := r.runClient(ctx, c, &res, echoArgs(c, srv.addr)...); err != nil {
			return err
		}
		rd.Rate, rd.P50, rd.P99, rd.P999 = stats.Num(res.Rate), stats.Num(res.Latency.P50), stats.Num(res.Latency.P99), stats.Num(res.Latency.P999)
		total = float64(res.Total)
	case LoadHandshake:
		var res client.HandshakeResult
		if err := r.runClient(ctx, c, &res, "handshake", "-addr", srv.addr, "-conns", strconv.Itoa(c.Conns), "-size", strconv.Itoa(c.Size),
			"-warmup", c.Warmup.String(), "-duration", c.Duration.String()); err != nil {
			return err
		}
		rd.Rate, rd.P50, rd.P99, rd.P999 = stats.Num(res.Rate), stats.Num(res.Latency.P50), stats.Num(res.Latency.P99), stats.Num(res.Latency.P999)
		total = float64(res.Total)
	case LoadUDP:
		var res client.UDPEchoResult
		if err := r.runClient(ctx, c, &res, "udp", "-addr", srv.addr, "-conns", strconv.Itoa(c.Conns), "-inflight", strconv.Itoa(c.InFlight),
			"-size", strconv.Itoa(c.Size), "-warmup", c.Warmup.String(), "-duration", c.Duration.String()); err != nil {
			return err
		}
		rd.Rate, rd.P50, rd.P99, rd.P999 = stats.Num(res.Rate), stats.Num(res.Latency.P50), stats.Num(res.Latency.P99), stats.Num(res.Latency.P999)
		rd.Lost = stats.Num(res.Lost)
		if res.RcvbufErrors >= 0 {
			rd.RcvbufErrors = stats.Num(res.RcvbufErrors)
		}
		total = float64(res.Total)
	case LoadBcast:
		var res client.EchoResult
		if err := r.runClient(ctx, c, &res, "broadcast", "-addr", srv.addr, "-conns", strconv.Itoa(c.Conns), "-size", strconv.Itoa(c.Size),
			"-warmup", c.Warmup.String(), "-duration", c.Duration.String()); err != nil {
			return err
		}
		rd.Rate, rd.P50, rd.P99, rd.P999 = stats.Num(res.Rate), stats.Num(res.Latency.P50), stats.Num(res.Latency.P99), stats.Num(res.Latency.P999)
		total = float64(res.Total)
	case LoadOpenLoop:
		var res client.OpenLoopResult
		if err := r.runClient(ctx, c, &res, "http", "-addr", srv.addr, "-conns", strconv.Itoa(c.Conns), "-rate", strconv.FormatFloat(rate, 'f', 0, 64),
			"-warmup", c.Warmup.String(), "-duration", c.Duration.String()); err != nil {
			return err
		}
		rd.Rate, rd.P50, rd.P99, rd.P999 = stats.Num(res.Achieved), stats.Num(res.Latency.P50), stats.Num(res.Latency.P99), stats.Num(res.Latency.P999)
		total = float64(res.Total)
	case LoadH2:
		n, err := r.h2load(ctx, c, srv.addr, rd)
		if err != nil {
			return err
		}
		total = float64(n)
	case LoadDNS:
		n, err := r.dnsperf(ctx, c, srv.addr, rd)
		if err != nil {
			return err
		}
		total = float64(n)
	case LoadWrk:
		cfg := client.WrkConfig{Addr: srv.addr, Conns: c.Conns, Duration: c.Duration, Depth: c.Depth,
			Script: filepath.Join(r.Root, "scripts", "pipeline.lua"), Wrap: r.wrap(c), TLS: c.Kind == peers.HTTPS}
		res, err := client.RunWrk(ctx, cfg)
		if errors.Is(err, client.ErrWrkNoLatency) {
			r.logf("%s: %v; running wrk again", c.ID, err)
			if s0, err = proc.Read(pid); err != nil {
				return err
			}
			m0, haveAllocs = srv.mallocs(ctx)
			res, err = client.RunWrk(ctx, cfg)
		}
		if err != nil {
			return err
		}
		if res.Errors > 0 || res.Non2xx > 0 {
			return fmt.Errorf("wrk saw %d socket errors and %d non-2xx responses", res.Errors, res.Non2xx)
		}
		rd.Rate, rd.P50, rd.P99 = stats.Num(res.Rate), wrkLatency(res.P50), wrkLatency(res.P99)
		total = float64(res.Requests)
	}
	s1, err := proc.Read(pid)
	if err != nil {
		return err
	}
	if total <= 0 {
		return errors.New("no request completed")
	}
	d := s1.Sub(s0)
	rd.CPUPerReq = stats.Num(float64(d.CPU.Microseconds()) / total)
	rd.VolPerReq = stats.Num(float64(d.Voluntary) / total)
	rd.InvolPerReq = stats.Num(float64(d.Involuntary) / total)
	if m1, ok := srv.mallocs(ctx); ok && haveAllocs {
		rd.Allocs = stats.Num(float64(m1-m0) / total)
	}
	return nil
}

// echoArgs are benchclient's arguments for case c's echo load: TLS for the
// TLS echo kind, so the peers of every other kind meet the plain client.
func echoArgs(c Case, addr string) []string {
	args := []string{"echo", "-addr", addr, "-conns", strconv.Itoa(c.Conns), "-size", strconv.Itoa(c.Size),
		"-warmup", c.Warmup.String(), "-duration", c.Duration.String()}
	switch c.Kind {
	case peers.TLSEcho:
		args = append(args, "-tls")
	case peers.WebSocket:
		args = append(args, "-ws")
	}
	return args
}

// runClient runs benchclient and decodes its JSON line into res.
func (r *Runner) runClient(ctx context.Context, c Case, res any, args ...string) error {
	argv := append(r.wrap(c), r.bin("benchclient"))
	out, err := runOutput(ctx, append(argv, args...))
	if err != nil {
		return err
	}
	if err := json.Unmarshal([]byte(strings.TrimSpace(out)), res); err != nil {
		return fmt.Errorf("benchclient: bad output %q: %v", out, err)
	}
	return nil
}

// inProc runs the server with its clients inside one process.
func (r *Runner) inProc(ctx context.Context, c Case, rate float64, v variant, row *Row, rd *Round) error {
	if v.peer.Program != nil {
		return errors.New("n/a: not a Go program, so no clients can run in its process")
	}
	args := []string{"-inproc", string(c.Load), "-conns", strconv.Itoa(c.Conns), "-size", strconv.Itoa(c.Size),
		"-rate", strconv.FormatFloat(rate, 'f', 0, 64), "-warmup", c.Warmup.String(), "-duration", c.Duration.String()}
	if c.Load == LoadOpenLoop {
		args[1] = "http"
	}
	if c.Kind == peers.TLSEcho {
		args = append(args, "-tls")
	}
	srv, err := r.startServer(ctx, v, c.Scenario, args...)
	if err != nil {
		return err
	}
	row.Backend, row.Threading, row.GOMAXPROCS, row.Detail = srv.kv["backend"], srv.kv["threading"], srv.kv["gomaxprocs"], srv.kv["detail"]
	line, err := readLine(ctx, srv.out, c.Warmup+c.Duration+2*time.Minute)
	if serr := srv.stop(); err == nil && serr != nil {
		err = serr
	}
	if err != nil {
		return err
	}
	var res struct {
		Client struct {
			Rate     float64       `json:"msgs_per_sec"`
			Achieved float64       `json:"achieved_rps"`
			Total    int64         `json:"total_msgs"`
			Reqs     int64         `json:"total_reqs"`
			Latency  stats.Latency `json:"latency"`
		} `json:"client"`
		CPU     int64  `json:"process_cpu_ns"`
		Mallocs uint64 `json:"mallocs"`
	}
	js, ok := strings.CutPrefix(strings.TrimSpace(line), "result ")
	if !ok {
		return fmt.Errorf("in-process run: bad result line %q", line)
	}
	if err := json.Unmarshal([]byte(js), &res); err != nil {
		return err
	}
	cl := res.Client
	total := float64(cl.Total + cl.Reqs)
	if total <= 0 {
		return errors.New("no request completed")
	}
	rd.Rate = stats.Num(cl.Rate + cl.Achieved)
	rd.P50, rd.P99, rd.P999 = stats.Num(cl.Latency.P50), stats.Num(cl.Latency.P99), stats.Num(cl.Latency.P999)
	rd.CPUPerReq = stats.Num(float64(res.CPU) / 1e3 / total)
	rd.Allocs = stats.Num(float64(res.Mallocs) / total)
	return nil
}
