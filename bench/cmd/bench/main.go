// Command bench runs the comparison and writes results/latest.md and
// results/latest.json (and results/latest.png when gnuplot is installed),
// then prints the tables.
//
//	go run ./cmd/bench -mode quick   # make bench-quick: headline rows, one round, ~3-4 min
//	go run ./cmd/bench -mode full    # make bench-compare: the sweep, 5 rounds, ~58 min
//	go run ./cmd/bench -mode full -cases p1-tls-handshake-c16,p1-tls-idle-10k -out /tmp/tls  # some cases only
//	go run ./cmd/bench -rerender     # the report again from results/latest.json
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/ringloop/ringloop/bench/runner"
)

func main() {
	mode := flag.String("mode", "quick", "quick, full or smoke")
	out := flag.String("out", "results", "directory for latest.md, latest.json and latest.png")
	bin := flag.String("bin", ".bin", "directory for the built servers and clients")
	only := flag.String("peers", "", "comma-separated peers to run (default: all)")
	onlyCases := flag.String("cases", "", "comma-separated case ids of the mode's suite to run (default: all)")
	command := flag.String("command", "", "the command to quote in the report (default: this one)")
	rerender := flag.Bool("rerender", false, "run nothing: render latest.md (and the chart) again from the out directory's latest.json, for a change in the report's tables")
	flag.Parse()
	if *rerender {
		if err := render(*out); err != nil {
			fail(err)
		}
		return
	}

	cases, err := runner.Suite(runner.Mode(*mode))
	if err != nil {
		fail(err)
	}
	if *onlyCases != "" {
		if cases, err = selectCases(cases, strings.Split(*onlyCases, ",")); err != nil {
			fail(err)
		}
	}
	cfg := runner.Config{Root: ".", Bin: *bin, Log: os.Stderr}
	if *only != "" {
		cfg.Peers = strings.Split(*only, ",")
	}
	r := runner.New(cfg)
	ctx := context.Background()
	if err := r.Build(ctx); err != nil {
		fail(err)
	}
	fmt.Fprintf(os.Stderr, "bench: %d cases, about %v\n", len(cases), r.Estimate(cases).Round(time.Minute))
	results := r.Run(ctx, cases)
	if *command == "" {
		*command = "go run ./cmd/bench " + strings.Join(os.Args[1:], " ")
	}
	rep := runner.NewReport(runner.Mode(*mode), *command, r.Config, cases, results)
	md, err := runner.Write(*out, rep)
	if err != nil {
		fail(err)
	}
	if err := runner.Plot(ctx, *out, rep); err != nil {
		fmt.Fprintln(os.Stderr, "bench: no chart:", err)
	}
	fmt.Print(md)
}

// render rewrites latest.md, latest.json's derived comparisons and the
// chart from the measurements in dir/latest.json.
func render(dir string) error {
	rep, err := runner.ReadReport(filepath.Join(dir, "latest.json"))
	if err != nil {
		return err
	}
	md, err := runner.Write(dir, rep)
	if err != nil {
		return err
	}
	if err := runner.Plot(context.Background(), dir, rep); err != nil {
		fmt.Fprintln(os.Stderr, "bench: no chart:", err)
	}
	fmt.Print(md)
	return nil
}

// selectCases keeps the cases named in ids, in the suite's order; an id the
// suite does not have is an error (a typo would otherwise run nothing).
func selectCases(cases []runner.Case, ids []string) ([]runner.Case, error) {
	var out []runner.Case
	for _, c := range cases {
		if slices.Contains(ids, c.ID) {
			out = append(out, c)
		}
	}
	for _, id := range ids {
		if !slices.ContainsFunc(out, func(c runner.Case) bool { return c.ID == id }) {
			return nil, fmt.Errorf("-cases: no case %q in this mode", id)
		}
	}
	return out, nil
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "bench:", err)
	os.Exit(1)
}
