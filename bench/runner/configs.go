package runner

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/ringloop/ringloop/bench/stats"
)

// ConfigScore is one configuration (backend × threading mode) scored as if
// it were the automatic default: over every family × case where each
// configuration has a throughput, how often it comes within Within of the
// family's best row, its geometric-mean distance from the best and its worst
// case. It answers which configuration the library should pick by itself,
// which one run's per-row table (DefaultVsBest) cannot: a row's rounds
// spread wider than 5%.
type ConfigScore struct {
	Backend    string    `json:"backend"`
	Threading  string    `json:"threading"`
	Default    bool      `json:"default,omitempty"` // the automatic choice here
	Compared   int       `json:"compared"`          // family × case groups scored
	RateWithin int       `json:"rate_within"`       // rate ÷ best ≥ 1-Within
	CPUWithin  int       `json:"cpu_within"`        // CPU per request ÷ best ≤ 1+Within
	BothWithin int       `json:"both_within"`
	GeoRate    stats.Num `json:"geomean_rate_ratio"` // geometric mean of rate ÷ best (≤ 1)
	GeoCPU     stats.Num `json:"geomean_cpu_ratio"`  // of CPU per request ÷ best (≥ 1)
	WorstRate  stats.Num `json:"worst_rate_ratio"`
	WorstCase  string    `json:"worst_case"` // "case, family" of WorstRate
	// Overlap counts the groups where the configuration's best round
	// reaches the best row's worst round (rate): within the rounds' spread.
	Overlap int `json:"rate_overlap"`
}

// ConfigScores scores every configuration that a ringloop row runs. A group
// (family × case) counts only when every configuration seen in the family
// has a throughput and a CPU per request there, so that each is scored on
// the same groups.
func ConfigScores(rep Report) []ConfigScore {
	type key struct{ backend, threading string }
	var keys []key
	famKeys := map[string][]key{}
	for _, cr := range rep.Cases {
		if !comparable(cr) {
			continue
		}
		for _, r := range cr.Rows {
			if r.Family == "" || r.Backend == "" || r.Threading == "" {
				continue
			}
			k := key{r.Backend, r.Threading}
			if !slices.Contains(keys, k) {
				keys = append(keys, k)
			}
			if !slices.Contains(famKeys[r.Family], k) {
				famKeys[r.Family] = append(famKeys[r.Family], k)
			}
		}
	}
	if len(keys) < 2 {
		return nil
	}
	slices.SortFunc(keys, func(a, b key) int {
		return strings.Compare(a.backend+a.threading, b.backend+b.threading)
	})
	scores := make([]ConfigScore, len(keys))
	logRate := make([]float64, len(keys))
	logCPU := make([]float64, len(keys))
	for i, k := range keys {
		scores[i] = ConfigScore{Backend: k.backend, Threading: k.threading, Default: rep.Auto.Picks(k.backend, k.threading), GeoRate: nan(), GeoCPU: nan(), WorstRate: nan()}
	}
	for _, cr := range rep.Cases {
		if !comparable(cr) {
			continue
		}
		by, fams := familyRows(cr)
		for _, f := range fams {
			rows := map[key]Row{}
			for _, r := range by[f] {
				if r.Rate.Valid() && r.CPUPerReq.Valid() && r.Rate.Median > 0 && r.CPUPerReq.Median > 0 {
					rows[key{r.Backend, r.Threading}] = r
				}
			}
			if len(famKeys[f]) < 2 || len(rows) < len(famKeys[f]) {
				continue
			}
			var best, bestMin, bestCPU float64
			for _, r := range rows {
				if m := float64(r.Rate.Median); m > best {
					best, bestMin = m, float64(r.Rate.Min)
				}
				if c := float64(r.CPUPerReq.Median); bestCPU == 0 || c < bestCPU {
					bestCPU = c
				}
			}
			for i, k := range keys {
				r, ok := rows[k]
				if !ok {
					continue
				}
				s := &scores[i]
				rate, cpu := float64(r.Rate.Median)/best, float64(r.CPUPerReq.Median)/bestCPU
				s.Compared++
				if rate >= 1-Within {
					s.RateWithin++
				}
				if cpu <= 1+Within {
					s.CPUWithin++
				}
				if rate >= 1-Within && cpu <= 1+Within {
					s.BothWithin++
				}
				if float64(r.Rate.Max) >= bestMin {
					s.Overlap++
				}
				logRate[i] += math.Log(rate)
				logCPU[i] += math.Log(cpu)
				if math.IsNaN(float64(s.WorstRate)) || rate < float64(s.WorstRate) {
					s.WorstRate, s.WorstCase = stats.Num(rate), cr.ID+", "+f
				}
			}
		}
	}
	for i := range scores {
		if n := scores[i].Compared; n > 0 {
			scores[i].GeoRate = stats.Num(math.Exp(logRate[i] / float64(n)))
			scores[i].GeoCPU = stats.Num(math.Exp(logCPU[i] / float64(n)))
		}
	}
	return scores
}

// ConfigScoresTitle heads the table in the report.
const ConfigScoresTitle = "Each configuration scored as the default"

// ConfigScoresTable renders ConfigScores as markdown (without its title);
// empty when fewer than two configurations ran.
func ConfigScoresTable(rep Report) string {
	ss := ConfigScores(rep)
	if len(ss) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("Every backend × threading mode scored as if `engine.New()` picked it: over the family × case groups where each configuration was measured, " +
		"how often it is within 5% of the family's best row (throughput, CPU per request, both), how often its best round reaches the best row's worst " +
		"(within the rounds' spread), and the geometric mean of its ratios to the best. The automatic default should be the row that scores best here.\n\n")
	b.WriteString("| configuration | groups | rate within 5% | CPU within 5% | both | rate within spread | geomean rate ÷ best | geomean CPU ÷ best | worst rate ÷ best |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|\n")
	for _, s := range ss {
		name := s.Backend + ", " + s.Threading
		if s.Default {
			name += " [default]"
		}
		worst := num(s.WorstRate, 2)
		if s.WorstCase != "" {
			worst += " (" + cell(s.WorstCase) + ")"
		}
		fmt.Fprintf(&b, "| %s | %d | %d | %d | %d | %d | %s | %s | %s |\n", name, s.Compared, s.RateWithin, s.CPUWithin, s.BothWithin, s.Overlap,
			num(s.GeoRate, 3), num(s.GeoCPU, 3), worst)
	}
	b.WriteString("\n")
	return b.String()
}
