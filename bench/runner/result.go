package runner

import (
	"math"

	"github.com/ringloop/ringloop/bench/stats"
)

// Round is what one run of one peer in one case measured. A figure the run
// could not obtain is NaN (written as null in the JSON).
type Round struct {
	Rate        stats.Num `json:"rate"`           // msgs/s or requests/s
	P50         stats.Num `json:"p50_us"`         // latency percentiles, µs
	P99         stats.Num `json:"p99_us"`         //
	P999        stats.Num `json:"p999_us"`        //
	CPUPerReq   stats.Num `json:"cpu_us_per_req"` // server (or in-process: whole process) CPU µs
	VolPerReq   stats.Num `json:"vcsw_per_req"`   // voluntary context switches
	InvolPerReq stats.Num `json:"ivcsw_per_req"`  // involuntary context switches
	Allocs      stats.Num `json:"allocs_per_req"`
	Syscalls    stats.Num `json:"syscalls_per_req"`
	RSSPerConn  stats.Num `json:"rss_bytes_per_conn"`
	// At rest (no client): CPU as % of one core, threads alive at the end,
	// threads added over the window, voluntary context switches per second.
	RestCPU     stats.Num `json:"rest_cpu_pct_core"`
	Threads     stats.Num `json:"threads"`
	NewThreads  stats.Num `json:"new_threads"`
	WakeupsPerS stats.Num `json:"vcsw_per_sec"`
	// UDP echo: datagrams the client sent that never came back, and the
	// rise of the kernel's Udp RcvbufErrors, over the whole run.
	Lost         stats.Num `json:"lost"`
	RcvbufErrors stats.Num `json:"rcvbuf_errors"`
	Err          string    `json:"error,omitempty"`
	Note         string    `json:"note,omitempty"` // how a figure was obtained
}

// nanRound is a round with no figures yet.
func nanRound() Round {
	n := stats.Num(math.NaN())
	return Round{Rate: n, P50: n, P99: n, P999: n, CPUPerReq: n, VolPerReq: n, InvolPerReq: n, Allocs: n, Syscalls: n, RSSPerConn: n,
		RestCPU: n, Threads: n, NewThreads: n, WakeupsPerS: n, Lost: n, RcvbufErrors: n}
}

// Row is one peer (one threading mode of it) in one case.
type Row struct {
	Peer       string `json:"peer"`  // registry name
	Label      string `json:"label"` // peer and threading mode
	Backend    string `json:"backend"`
	Threading  string `json:"threading"`
	GOMAXPROCS string `json:"gomaxprocs"`
	Detail     string `json:"detail,omitempty"`
	// Family is the peer's ringloop family (peers.Families); Default marks
	// the family's row in the automatic configuration (Report.Auto).
	Family  string  `json:"family,omitempty"`
	Default bool    `json:"default,omitempty"`
	Error   string  `json:"error,omitempty"` // why some or all rounds have no figures
	Rounds  []Round `json:"rounds"`

	Rate         stats.Spread `json:"rate"`
	P50          stats.Spread `json:"p50_us"`
	P99          stats.Spread `json:"p99_us"`
	P999         stats.Spread `json:"p999_us"`
	CPUPerReq    stats.Spread `json:"cpu_us_per_req"`
	VolPerReq    stats.Spread `json:"vcsw_per_req"`
	InvolPerReq  stats.Spread `json:"ivcsw_per_req"`
	Allocs       stats.Spread `json:"allocs_per_req"`
	Syscalls     stats.Spread `json:"syscalls_per_req"`
	RSSPerConn   stats.Spread `json:"rss_bytes_per_conn"`
	RestCPU      stats.Spread `json:"rest_cpu_pct_core"`
	Threads      stats.Spread `json:"threads"`
	NewThreads   stats.Spread `json:"new_threads"`
	WakeupsPerS  stats.Spread `json:"vcsw_per_sec"`
	Lost         stats.Spread `json:"lost"`
	RcvbufErrors stats.Spread `json:"rcvbuf_errors"`
}

// summarize fills the spreads from the rounds.
func (r *Row) summarize() {
	pick := func(f func(Round) stats.Num) stats.Spread {
		v := make([]float64, len(r.Rounds))
		for i, x := range r.Rounds {
			v[i] = float64(f(x))
		}
		return stats.Of(v)
	}
	r.Rate = pick(func(x Round) stats.Num { return x.Rate })
	r.P50 = pick(func(x Round) stats.Num { return x.P50 })
	r.P99 = pick(func(x Round) stats.Num { return x.P99 })
	r.P999 = pick(func(x Round) stats.Num { return x.P999 })
	r.CPUPerReq = pick(func(x Round) stats.Num { return x.CPUPerReq })
	r.VolPerReq = pick(func(x Round) stats.Num { return x.VolPerReq })
	r.InvolPerReq = pick(func(x Round) stats.Num { return x.InvolPerReq })
	r.Allocs = pick(func(x Round) stats.Num { return x.Allocs })
	r.Syscalls = pick(func(x Round) stats.Num { return x.Syscalls })
	r.RSSPerConn = pick(func(x Round) stats.Num { return x.RSSPerConn })
	r.RestCPU = pick(func(x Round) stats.Num { return x.RestCPU })
	r.Threads = pick(func(x Round) stats.Num { return x.Threads })
	r.NewThreads = pick(func(x Round) stats.Num { return x.NewThreads })
	r.WakeupsPerS = pick(func(x Round) stats.Num { return x.WakeupsPerS })
	r.Lost = pick(func(x Round) stats.Num { return x.Lost })
	r.RcvbufErrors = pick(func(x Round) stats.Num { return x.RcvbufErrors })
}

// CaseResult is a case and its rows.
type CaseResult struct {
	ID       string  `json:"id"`
	Title    string  `json:"title"`
	Scenario string  `json:"scenario"`
	Kind     string  `json:"kind"`
	Load     string  `json:"load"`
	Conns    int     `json:"conns"`
	Size     int     `json:"size,omitempty"`
	Depth    int     `json:"depth,omitempty"`
	InFlight int     `json:"in_flight,omitempty"`   // UDP echo
	Rate     float64 `json:"target_rate,omitempty"` // open loop
	Rounds   int     `json:"rounds"`
	Warmup   string  `json:"warmup"`
	Duration string  `json:"duration"`
	Note     string  `json:"note,omitempty"`
	Rows     []Row   `json:"rows"`
}

// Report is a whole run: what the JSON file holds.
type Report struct {
	Date      string            `json:"date"`
	Command   string            `json:"command"`
	Mode      string            `json:"mode"`
	Machine   map[string]string `json:"machine"`
	Knobs     map[string]string `json:"knobs"`
	Scenarios []Scenario        `json:"scenarios"`
	// Auto is what engine.New() runs here with no options and no
	// environment; the two comparisons after it are read from Cases
	// (NewReport fills them for the JSON; Markdown reads them afresh).
	Auto          Auto          `json:"ringloop_auto"`
	DefaultVsBest []DefaultBest `json:"default_vs_best"`
	UringVsEpoll  []BackendPair `json:"uring_vs_epoll"`
	ConfigScores  []ConfigScore `json:"config_scores"`
	Cases         []CaseResult  `json:"cases"`
}
