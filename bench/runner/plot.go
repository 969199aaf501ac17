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
// case, the throughput of every peer and of each ringloop family's default
// row as a ratio to the case's baseline (Baselines: 1 is the baseline; the
// ratio makes cases of 10k and 900k req/s readable on one axis), and below
// it the p99 latency in µs (both on log scales). The rows a user would pick by hand
// are in latest.md; the chart shows what one gets without picking.
func Plot(ctx context.Context, dir string, rep Report) error {
	if _, err := exec.LookPath("gnuplot"); err != nil {
		return errors.New("gnuplot is not installed (make deps installs it)")
	}
	var cases []CaseResult
	peerSet := map[string]int{}
	var labels []string
	for _, cr := range rep.Cases {
		if !comparable(cr) || !anyRate(cr) || baseRate(cr) <= 0 {
			continue
		}
		cases = append(cases, cr)
		for _, r := range cr.Rows {
			l, ok := plotLabel(r)
			if !ok {
				continue
			}
			if _, ok := peerSet[l]; !ok {
				peerSet[l] = len(labels)
				labels = append(labels, l)
			}
		}
	}
	if len(cases) == 0 {
		return errors.New("no throughput case to plot")
	}
	// One data file: a line per case, the case's name then, per label, the
	// rate ÷ the baseline's and the p99 ("NaN" where missing: a gap).
	var data strings.Builder
	hasP99 := make([]bool, len(labels))
	for _, cr := range cases {
		base := baseRate(cr)
		vals := make([]string, 2*len(labels))
		for i := range vals {
			vals[i] = "NaN"
		}
		for _, r := range cr.Rows {
			l, ok := plotLabel(r)
			if !ok {
				continue
			}
			i := peerSet[l]
			if r.Rate.Valid() {
				vals[2*i] = fmt.Sprintf("%.4g", float64(r.Rate.Median)/base)
			}
			if r.P99.Valid() {
				vals[2*i+1] = fmt.Sprintf("%g", float64(r.P99.Median))
				hasP99[i] = true
			}
		}
		fmt.Fprintf(&data, "%q %s\n", cr.ID, strings.Join(vals, " "))
	}
	datFile := filepath.Join(dir, "latest.dat")
	if err := os.WriteFile(datFile, []byte(data.String()), 0o644); err != nil {
		return err
	}
	defer os.Remove(datFile)
	// A peer keeps its colour (line type) in both plots; one with no p99
	// in any case (dnsperf gives none) is left out of the second, where
	// gnuplot refuses a column without a valid point.
	var plotRate, plotP99 []string
	for i, l := range labels {
		plotRate = append(plotRate, fmt.Sprintf("'%s' using %d:xtic(1) title %q lt %d", datFile, 2*i+2, l, i+1))
		if hasP99[i] {
			plotP99 = append(plotP99, fmt.Sprintf("'%s' using %d:xtic(1) title %q lt %d", datFile, 2*i+3, l, i+1))
		}
	}
	p99 := "plot " + strings.Join(plotP99, ", ")
	if len(plotP99) == 0 {
		p99 = `unset logscale y
unset xtics
unset ytics
set yrange [0:1]
set label "no p99 in any case" at graph 0.5, 0.5 center
plot 2 notitle`
	}
	// 12 px a bar, within what cairo draws (32767 px a side).
	width := min(max(1400, 12*len(cases)*len(labels)+400), 16000)
	script := fmt.Sprintf(`set terminal pngcairo size %d,1200 font ",10" noenhanced
set output '%s'
set multiplot layout 2,1 title "ringloop bench (%s), %s: every peer and each ringloop family's default row"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set xtics rotate by -45 scale 0
set key outside right top vertical
set grid ytics
set logscale y 2
set title "throughput ÷ the case's baseline, log scale (echo: c-liburing, HTTP: net/http, TLS: net+tls, HTTPS: net/http+tls, WebSocket: gorilla; median)"
plot %s, 1 with lines lc rgb "black" dt 2 notitle
set title "p99 latency (µs, median; log scale)"
set logscale y 10
%s
unset multiplot
`, width, filepath.Join(dir, "latest.png"), rep.Mode, rep.Date, strings.Join(plotRate, ", "), p99)
	cmd := exec.CommandContext(ctx, "gnuplot")
	cmd.Stdin = strings.NewReader(script)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("gnuplot: %v: %s", err, out)
	}
	return nil
}

// plotLabel names a row in the chart: a peer by its label, a ringloop
// family by its default row only ("ringloop echo [default]").
func plotLabel(r Row) (string, bool) {
	switch {
	case r.Family == "":
		return r.Label, true
	case r.Default:
		return r.Family + " [default]", true
	}
	return "", false
}

// baseRate is the median throughput of the case's baseline peer, 0 if it
// has none.
func baseRate(cr CaseResult) float64 {
	name, ok := Baselines[cr.Kind]
	if !ok {
		return 0
	}
	for _, r := range cr.Rows {
		if r.Peer == name && r.Rate.Valid() {
			return float64(r.Rate.Median)
		}
	}
	return 0
}

func anyRate(cr CaseResult) bool {
	for _, r := range cr.Rows {
		if r.Rate.Valid() {
			return true
		}
	}
	return false
}
