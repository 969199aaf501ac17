package main

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ringloop/ringloop/tests/kernels/report"
)

// resultsPath is where a full run (every pinned kernel, every package, no
// extra test flags) keeps its report: the file the README's kernel table is
// rendered from, committed with the README. A partial run writes only
// kernels.json in -out, so chasing one failure never replaces the record.
var (
	resultsPath = flag.String("results", "tests/kernels/results/latest.json",
		"report of a full run, the README's kernel table's source (partial runs write -out's kernels.json only)")
	readmePath = flag.String("readme", "README.md", "README whose kernel table a full run renders from its report (\"\": leave it)")
)

// writeResults stores the run's report as kernels.json in out and, for a
// full run, at resultsPath, with the README's kernel table rendered from it
// (so a second make test finds the two agreeing; commit both).
func writeResults(out string, full bool, rs []*kernelResult, pkgs []string, took time.Duration, parallel int) error {
	rep := report.Report{
		Date:     time.Now().UTC().Format("2006-01-02 15:04 MST"),
		Duration: took.Round(time.Second).String(),
		Parallel: parallel,
		Command:  command(os.Args[1:]),
	}
	for _, r := range rs {
		b := report.Boot{Name: r.name, Label: r.label, Release: r.release, Package: r.pkg, Version: r.version, Args: r.args,
			Expect: r.expect, Backend: r.backend, Threading: r.threading, Features: r.features, Reason: r.reason, Only: r.only,
			OK: r.ok(pkgs), Seconds: r.seconds}
		if r.err != nil {
			b.Err = r.err.Error()
		}
		for _, p := range r.packages(pkgs) {
			v, found := r.verdicts[p]
			if !found {
				b.Packages = append(b.Packages, report.Package{Name: p, Status: "no verdict"})
				continue
			}
			b.Packages = append(b.Packages, report.Package{Name: p, Status: v.status, Passed: v.passed, Failed: v.failed, Skipped: v.skipped, Seconds: v.seconds})
		}
		rep.Boots = append(rep.Boots, b)
	}
	if err := report.Write(filepath.Join(out, "kernels.json"), rep); err != nil {
		return err
	}
	if !full || *resultsPath == "" {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(*resultsPath), 0o755); err != nil {
		return err
	}
	if err := report.Write(*resultsPath, rep); err != nil {
		return err
	}
	if *readmePath == "" {
		return nil
	}
	return report.UpdateREADME(*readmePath, rep)
}

// command is how the run was invoked, as a reader would type it from the
// repository's root: paths under the working directory relative, the home
// directory as ~ (no machine's paths in a committed report).
func command(args []string) string {
	wd, _ := os.Getwd()
	home, _ := os.UserHomeDir()
	out := []string{"go", "run", "./tests/kernels/run"}
	for _, a := range args {
		if rel, ok := strings.CutPrefix(a, wd+"/"); ok && wd != "" {
			a = rel
		} else if rest, ok := strings.CutPrefix(a, home+"/"); ok && home != "" {
			a = "~/" + rest
		}
		out = append(out, a)
	}
	return strings.Join(out, " ")
}
