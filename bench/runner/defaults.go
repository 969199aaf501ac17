package runner

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/ringloop/ringloop/bench/peers"
	"github.com/ringloop/ringloop/bench/stats"
)

// Within is how close to the best the automatic default must come (issue
// 21: "within 5% of the best configuration a user could pick by hand").
const Within = 0.05

// DefaultBest is one ringloop family in one case: its automatic default's
// row against the best of its rows (every backend × threading mode), by
// median throughput and, separately, by median CPU per request. A figure
// that cannot be had is NaN (null in the JSON) and Note says why.
type DefaultBest struct {
	Case     string    `json:"case"`
	Family   string    `json:"family"`
	Rows     int       `json:"rows"`     // the family's rows in the case
	Measured int       `json:"measured"` // of them, with a throughput
	Default  string    `json:"default"`  // the default row's label ("" when there is none)
	Rate     stats.Num `json:"rate"`
	CPU      stats.Num `json:"cpu_us_per_req"`
	BestRate string    `json:"best_rate_row"` // label of the row with the highest median rate
	TopRate  stats.Num `json:"best_rate"`
	BestCPU  string    `json:"best_cpu_row"` // label of the row with the lowest median CPU per request
	TopCPU   stats.Num `json:"best_cpu_us_per_req"`
	// RateRatio is the default's rate ÷ the best (≤ 1), CPURatio its CPU
	// per request ÷ the best (≥ 1).
	RateRatio stats.Num `json:"rate_ratio"`
	CPURatio  stats.Num `json:"cpu_ratio"`
	Note      string    `json:"note,omitempty"`
}

// RateWithin and CPUWithin report whether the default is within Within
// of the best.
func (d DefaultBest) RateWithin() bool { return float64(d.RateRatio) >= 1-Within }
func (d DefaultBest) CPUWithin() bool  { return float64(d.CPURatio) <= 1+Within }

// BackendPair is one family in one case and threading mode: its io_uring
// row against its epoll row.
type BackendPair struct {
	Case      string    `json:"case"`
	Family    string    `json:"family"`
	Threading string    `json:"threading"`
	URingRate stats.Num `json:"uring_rate"`
	EpollRate stats.Num `json:"epoll_rate"`
	URingCPU  stats.Num `json:"uring_cpu_us_per_req"`
	EpollCPU  stats.Num `json:"epoll_cpu_us_per_req"`
	RateRatio stats.Num `json:"rate_ratio"` // io_uring ÷ epoll
	CPURatio  stats.Num `json:"cpu_ratio"`  // io_uring ÷ epoll
	Note      string    `json:"note,omitempty"`
}

// comparable says whether a case's rows have a throughput and a CPU per
// request to compare (idle, system-call and rest cases measure other things).
func comparable(cr CaseResult) bool {
	switch cr.Load {
	case string(LoadEcho), string(LoadWrk), string(LoadOpenLoop), string(LoadUDP), string(LoadDNS):
		return true
	}
	return false
}

// familyRows returns the rows of each ringloop family in the case, by
// family in peers.Families order, and the families present.
func familyRows(cr CaseResult) (map[string][]Row, []string) {
	by := map[string][]Row{}
	for _, r := range cr.Rows {
		if r.Family != "" {
			by[r.Family] = append(by[r.Family], r)
		}
	}
	var fams, other []string
	for _, f := range peers.Families {
		if len(by[f]) > 0 {
			fams = append(fams, f)
		}
	}
	for f := range by { // a family this build does not list: last, by name
		if !slices.Contains(peers.Families, f) {
			other = append(other, f)
		}
	}
	slices.Sort(other)
	return by, append(fams, other...)
}

func nan() stats.Num { return stats.Num(math.NaN()) }

// failure is why a row has no figure.
func failure(r Row) string {
	if r.Error != "" {
		return r.Error
	}
	return "no figure"
}

// DefaultVsBestRows builds the default-vs-best comparison: one entry per
// ringloop family per case that has throughput and CPU figures.
func DefaultVsBestRows(rep Report) []DefaultBest {
	var out []DefaultBest
	for _, cr := range rep.Cases {
		if !comparable(cr) {
			continue
		}
		by, fams := familyRows(cr)
		for _, f := range fams {
			rows := by[f]
			d := DefaultBest{Case: cr.ID, Family: f, Rows: len(rows), Rate: nan(), CPU: nan(), TopRate: nan(), TopCPU: nan(), RateRatio: nan(), CPURatio: nan()}
			var def *Row
			for i, r := range rows {
				if r.Default {
					def = &rows[i]
				}
				if r.Rate.Valid() {
					d.Measured++
					if math.IsNaN(float64(d.TopRate)) || r.Rate.Median > d.TopRate {
						d.TopRate, d.BestRate = r.Rate.Median, r.Label
					}
				}
				// 0 µs is below the 10 ms tick's resolution, not a figure.
				if r.Rate.Valid() && r.CPUPerReq.Valid() && r.CPUPerReq.Median > 0 && (math.IsNaN(float64(d.TopCPU)) || r.CPUPerReq.Median < d.TopCPU) {
					d.TopCPU, d.BestCPU = r.CPUPerReq.Median, r.Label
				}
			}
			switch {
			case def == nil:
				d.Note = "no row runs the automatic choice"
				if !rep.Auto.Known() {
					d.Note = "the automatic choice is unknown"
				}
			case !def.Rate.Valid():
				d.Default = def.Label
				d.Note = "the default row was not measured: " + failure(*def)
			case len(rows) == 1:
				d.Default, d.Rate, d.CPU = def.Label, def.Rate.Median, def.CPUPerReq.Median
				d.Note = "only the default's row runs in this case: nothing to set it against"
			default:
				d.Default = def.Label
				d.Rate = def.Rate.Median
				if d.TopRate > 0 {
					d.RateRatio = d.Rate / d.TopRate
				}
				if def.CPUPerReq.Valid() {
					d.CPU = def.CPUPerReq.Median
					// A 0 is under the tick's resolution (a short, loaded
					// run): no ratio rather than a made-up 0.
					if d.TopCPU > 0 && d.CPU > 0 {
						d.CPURatio = d.CPU / d.TopCPU
					}
				}
				if d.Measured < d.Rows {
					d.Note = fmt.Sprintf("best of the %d rows measured (of %d)", d.Measured, d.Rows)
				}
			}
			out = append(out, d)
		}
	}
	return out
}

// UringVsEpollRows builds the backend comparison: one entry per ringloop
// family, case and threading mode, io_uring's row against epoll's.
func UringVsEpollRows(rep Report) []BackendPair {
	var out []BackendPair
	for _, cr := range rep.Cases {
		if !comparable(cr) {
			continue
		}
		by, fams := familyRows(cr)
		for _, f := range fams {
			var modes []string
			for _, r := range by[f] {
				if !slices.Contains(modes, r.Threading) {
					modes = append(modes, r.Threading)
				}
			}
			for _, m := range modes {
				p := BackendPair{Case: cr.ID, Family: f, Threading: m, URingRate: nan(), EpollRate: nan(), URingCPU: nan(), EpollCPU: nan(), RateRatio: nan(), CPURatio: nan()}
				var u, e *Row
				for i, r := range by[f] {
					if r.Threading != m {
						continue
					}
					switch r.Backend {
					case "io_uring":
						u = &by[f][i]
					case "epoll":
						e = &by[f][i]
					}
				}
				var why []string
				for _, side := range []struct {
					name      string
					r         *Row
					rate, cpu *stats.Num
				}{{"io_uring", u, &p.URingRate, &p.URingCPU}, {"epoll", e, &p.EpollRate, &p.EpollCPU}} {
					switch {
					case side.r == nil:
						why = append(why, "no "+side.name+" row")
					case !side.r.Rate.Valid():
						why = append(why, side.name+" not measured: "+failure(*side.r))
					default:
						*side.rate = side.r.Rate.Median
						if side.r.CPUPerReq.Valid() {
							*side.cpu = side.r.CPUPerReq.Median
						}
					}
				}
				p.Note = strings.Join(why, "; ")
				if p.EpollRate > 0 {
					p.RateRatio = p.URingRate / p.EpollRate
				}
				if p.EpollCPU > 0 {
					p.CPURatio = p.URingCPU / p.EpollCPU
				}
				out = append(out, p)
			}
		}
	}
	return out
}

// The comparisons' titles: headings in the report, bold lines in the README.
const (
	DefaultVsBestTitle = "Automatic default vs the best configuration a user could pick by hand"
	UringVsEpollTitle  = "io_uring vs epoll in the same threading mode"
)

// DefaultVsBestTable renders DefaultVsBestRows as markdown (without its
// title); empty when no case has a ringloop family.
func DefaultVsBestTable(rep Report) string {
	ds := DefaultVsBestRows(rep)
	if len(ds) == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "The automatic default here: %s, what `engine.New()` runs with no options and no environment; its row is marked [default] in every table. "+
		"Per case and ringloop family: the default row's median throughput and CPU per request against the family's best row (every backend × threading mode), "+
		"by throughput and separately by CPU per request. Within 5%%: default ÷ best ≥ %.2f in throughput, ≤ %.2f in CPU per request (issue 21's goal).\n\n",
		rep.Auto, 1-Within, 1+Within)
	var nRate, okRate, nCPU, okCPU int
	for _, d := range ds {
		if !math.IsNaN(float64(d.RateRatio)) {
			nRate++
			if d.RateWithin() {
				okRate++
			}
		}
		if !math.IsNaN(float64(d.CPURatio)) {
			nCPU++
			if d.CPUWithin() {
				okCPU++
			}
		}
	}
	fmt.Fprintf(&b, "Within 5%% of the best: throughput in %d of %d, CPU per request in %d of %d (family × case).\n\n", okRate, nRate, okCPU, nCPU)
	b.WriteString("| case | family | default | rate/s | best by rate | rate/s | default ÷ best | CPU µs/req | best by CPU | CPU µs/req | default ÷ best |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, d := range ds {
		def := dash(d.Default)
		if d.Note != "" && (d.Default == "" || math.IsNaN(float64(d.Rate))) {
			def = dash(d.Default) + ": " + cell(d.Note)
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", d.Case, d.Family, def,
			num(d.Rate, 0), dash(d.BestRate), num(d.TopRate, 0), within(d.RateRatio, d.RateWithin()),
			num(d.CPU, 2), dash(d.BestCPU), num(d.TopCPU, 2), within(d.CPURatio, d.CPUWithin()))
	}
	for _, d := range ds {
		if d.Note != "" && d.Default != "" && !math.IsNaN(float64(d.Rate)) {
			fmt.Fprintf(&b, "\n%s, %s: %s.", d.Case, d.Family, d.Note)
		}
	}
	b.WriteString("\n")
	return b.String()
}

// UringVsEpollTable renders UringVsEpollRows as markdown (without its
// title); empty when no case has a ringloop family.
func UringVsEpollTable(rep Report) string {
	ps := UringVsEpollRows(rep)
	if len(ps) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("Per case, ringloop family and threading mode: the io_uring row's median throughput and CPU per request ÷ the epoll row's " +
		"(issue 21's goals: throughput ≥ 1 everywhere, CPU per request ≤ 1 at 64 or more connections).\n\n")
	var nRate, okRate, nCPU, okCPU int
	for _, p := range ps {
		if !math.IsNaN(float64(p.RateRatio)) {
			nRate++
			if p.RateRatio >= 1 {
				okRate++
			}
		}
		if !math.IsNaN(float64(p.CPURatio)) {
			nCPU++
			if p.CPURatio <= 1 {
				okCPU++
			}
		}
	}
	fmt.Fprintf(&b, "io_uring at least epoll's throughput in %d of %d, at most its CPU per request in %d of %d.\n\n", okRate, nRate, okCPU, nCPU)
	b.WriteString("| case | family | threading | io_uring rate/s | epoll rate/s | io_uring ÷ epoll | io_uring CPU µs/req | epoll CPU µs/req | io_uring ÷ epoll |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|\n")
	for _, p := range ps {
		rat := num(p.RateRatio, 2)
		if p.Note != "" {
			rat = cell(p.Note)
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", p.Case, p.Family, dash(p.Threading),
			num(p.URingRate, 0), num(p.EpollRate, 0), rat, num(p.URingCPU, 2), num(p.EpollCPU, 2), num(p.CPURatio, 2))
	}
	b.WriteString("\n")
	return b.String()
}

// num formats a figure that may be missing.
func num(x stats.Num, prec int) string {
	if math.IsNaN(float64(x)) {
		return "n/a"
	}
	return group(float64(x), prec)
}

// within formats a ratio to the best and whether it is within Within.
func within(x stats.Num, ok bool) string {
	switch {
	case math.IsNaN(float64(x)):
		return "n/a"
	case ok:
		return fmt.Sprintf("%.2f within 5%%", float64(x))
	}
	return fmt.Sprintf("%.2f **not within 5%%**", float64(x))
}

// cell makes free text safe for a table cell.
func cell(s string) string {
	s = strings.ReplaceAll(strings.ReplaceAll(s, "|", "/"), "\n", " ")
	if len(s) > 160 {
		s = s[:160] + "…"
	}
	return s
}
