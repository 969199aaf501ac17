package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Plot draws latest.png from the report with gnuplot: for each throughput
// case of the report, msgs or requests per second per peer (left) and p99
// latency (right), as grouped bars.
func Plot(ctx context.Context, dir string, rep Report) error {
	if _, err := exec.LookPath("gnuplot"); err != nil {
		return errors.New("gnuplot is not installed (make deps installs it)")
	}
	var cases []CaseResult
	peerSet := map[string]int{}
	var labels []string
	for _, cr := range rep.Cases {
		if cr.Load != string(LoadEcho) && cr.Load != string(LoadWrk) && cr.Load != string(LoadOpenLoop) {
			continue
		}
		if !anyRate(cr) {
			continue
		}
		cases = append(cases, cr)
		for _, r := range cr.Rows {
			if _, ok := peerSet[r.Label]; !ok {
				peerSet[r.Label] = len(labels)
				labels = append(labels, r.Label)
			}
		}
	}
	if len(cases) == 0 {
		return errors.New("no throughput case to plot")
	}
	// One data file: a line per case, the case's name then, per peer, the
	// median rate and p99 ("NaN" where missing: gnuplot leaves a gap).
	var data strings.Builder
	for _, cr := range cases {
		vals := make([]string, 2*len(labels))
		for i := range vals {
			vals[i] = "NaN"
		}
		for _, r := range cr.Rows {
			i := peerSet[r.Label]
			if r.Rate.Valid() {
				vals[2*i] = fmt.Sprintf("%g", float64(r.Rate.Median))
			}
			if r.P99.Valid() {
				vals[2*i+1] = fmt.Sprintf("%g", float64(r.P99.Median))
			}
		}
		fmt.Fprintf(&data, "%q %s\n", cr.ID, strings.Join(vals, " "))
	}
	datFile := filepath.Join(dir, "latest.dat")
	if err := os.WriteFile(datFile, []byte(data.String()), 0o644); err != nil {
		return err
	}
	defer os.Remove(datFile)
	var plotRate, plotP99 []string
	for i, l := range labels {
		plotRate = append(plotRate, fmt.Sprintf("'%s' using %d:xtic(1) title %q", datFile, 2*i+2, l))
		plotP99 = append(plotP99, fmt.Sprintf("'%s' using %d:xtic(1) title %q", datFile, 2*i+3, l))
	}
	// 28 px a bar, within what cairo draws (32767 px a side): past that the
	// bars narrow.
	width := min(max(1200, 28*len(cases)*len(labels)), 16000)
	script := fmt.Sprintf(`set terminal pngcairo size %d,1100 font ",10" noenhanced
set output '%s'
set multiplot layout 2,1 title "ringloop bench (%s), %s"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set xtics rotate by -45 scale 0
set key outside right top vertical
set grid ytics
set title "throughput (msgs/s or req/s, median)"
plot %s
set title "p99 latency (µs, median; log scale)"
set logscale y
plot %s
unset multiplot
`, width, filepath.Join(dir, "latest.png"), rep.Mode, rep.Date, strings.Join(plotRate, ", "), strings.Join(plotP99, ", "))
	cmd := exec.CommandContext(ctx, "gnuplot")
	cmd.Stdin = strings.NewReader(script)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("gnuplot: %v: %s", err, out)
	}
	return nil
}

func anyRate(cr CaseResult) bool {
	for _, r := range cr.Rows {
		if r.Rate.Valid() {
			return true
		}
	}
	return false
}
