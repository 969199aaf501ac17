package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"
)

// printTable writes the per-kernel summary (what the probe chose) and the
// per-package results, and returns how many kernels failed.
func printTable(w io.Writer, rs []*kernelResult, pkgs []string) int {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "\nkernel\trelease\tbackend\tthreading\tfeatures\tprobe's reason\tresult\tseconds")
	failed := 0
	for _, r := range rs {
		res := "pass"
		if !r.ok(pkgs) {
			res = "FAIL"
			failed++
		}
		if r.backend != "" && r.backend != r.expect {
			res += " (want " + r.expect + ")"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%.0f\n", r.label, r.release, orDash(r.backend), orDash(r.threading),
			orDash(r.features), orDash(r.reason), res, r.seconds)
	}
	tw.Flush()

	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprint(tw, "\npackage\t")
	for _, r := range rs {
		fmt.Fprintf(tw, "%s passed\tfailed\tskipped\tseconds\t", r.label)
	}
	fmt.Fprintln(tw)
	var passed, failedTests, skipped int
	for _, p := range pkgs {
		fmt.Fprintf(tw, "%s\t", p)
		for _, r := range rs {
			v, found := r.verdicts[p]
			if !r.runs(p) {
				fmt.Fprint(tw, "-\tnot run\t-\t-\t")
				continue
			}
			if !found {
				fmt.Fprint(tw, "-\tno verdict\t-\t-\t")
				failedTests++
				continue
			}
			passed += v.passed
			failedTests += v.failed
			skipped += v.skipped
			if v.status != "pass" && v.failed == 0 {
				failedTests++ // the binary failed outside any test (a panic, a timeout)
			}
			fmt.Fprintf(tw, "%d\t%d\t%d\t%.1f\t", v.passed, v.failed, v.skipped, v.seconds)
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
	for _, r := range rs {
		if len(r.failures) > 0 || r.err != nil || len(r.unlisted) > 0 {
			fmt.Fprintf(w, "\nfailures on %s:\n", r.label)
			if r.err != nil {
				fmt.Fprintf(w, "  %v\n", r.err)
			}
			for _, l := range r.unlisted {
				fmt.Fprintf(w, "  %s\n", l)
			}
			for _, l := range r.failures {
				fmt.Fprintf(w, "  %s\n", l)
			}
		}
	}
	fmt.Fprintf(w, "\nkernels: %d passed, %d failed, %d skipped (leaf tests)\n", passed, failedTests, skipped)
	return failed
}

// writeMarkdown writes the README's kernel support table: kernel, package,
// backend, threading, features, tests, with the date of the run.
func writeMarkdown(path string, rs []*kernelResult, pkgs []string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "`make test-kernels`, %s (qemu TCG, 2 vCPUs on one host thread, tests with -short on the native probe):\n\n",
		time.Now().UTC().Format("2006-01-02"))
	b.WriteString("| kernel | Debian package | backend | threading | features used | tests |\n|---|---|---|---|---|---|\n")
	for _, r := range rs {
		passed, failed, skipped := 0, 0, 0
		for _, p := range r.packages(pkgs) {
			v := r.verdicts[p]
			passed += v.passed
			failed += v.failed
			skipped += v.skipped
		}
		result := fmt.Sprintf("%d passed, %d failed, %d skipped", passed, failed, skipped)
		if len(r.only) > 0 {
			result += " (" + strings.Join(r.only, ", ") + ")"
		}
		if !r.ok(pkgs) {
			result += " (FAIL)"
		}
		release, backend := orDash(r.release), orDash(r.backend)
		if r.args != "" {
			release += " with `" + r.args + "`"
		}
		if r.expect != "io_uring" && r.reason != "" {
			backend += " (" + r.reason + ")"
		}
		fmt.Fprintf(&b, "| %s | `%s` %s | %s | %s | %s | %s |\n",
			release, r.pkg, r.version, backend, orDash(r.threading), orDash(r.features), result)
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
