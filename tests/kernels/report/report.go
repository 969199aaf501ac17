// Package report is the record of one `make test-kernels` run: what each
// booted kernel's probe chose and each package's verdict. tests/kernels/run
// writes it (tests/kernels/results/latest.json after a full run, which is
// committed) and the README's kernel table is rendered from it (Markdown,
// through bench/cmd/readme), so the table is never typed by hand.
package report

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
)

// Report is one run of every pinned kernel.
type Report struct {
	Date     string `json:"date"`     // "2006-01-02 15:04 UTC", when the run ended
	Duration string `json:"duration"` // the whole run, build included
	Parallel int    `json:"parallel"` // VMs booted at once
	Command  string `json:"command"`  // how it was run
	Boots    []Boot `json:"boots"`
}

// Boot is one kernel booted once (the io_uring-disabled boot is a Boot of
// its own).
type Boot struct {
	Name      string    `json:"name"`    // log file name
	Label     string    `json:"label"`   // what the console table shows
	Release   string    `json:"release"` // uname -r in the VM ("" if it never booted)
	Package   string    `json:"package"` // Debian package and version
	Version   string    `json:"version"`
	Args      string    `json:"args,omitempty"` // kernel command line additions
	Expect    string    `json:"expect"`         // the backend the probe must choose
	Backend   string    `json:"backend"`
	Threading string    `json:"threading"`
	Features  string    `json:"features"`
	Reason    string    `json:"reason"`
	Only      []string  `json:"only,omitempty"` // the packages this boot runs (all when empty)
	OK        bool      `json:"ok"`             // booted, chose Expect, every package passed
	Err       string    `json:"error,omitempty"`
	Seconds   float64   `json:"seconds"`
	Packages  []Package `json:"packages"`
}

// Package is one test binary's verdict in one boot, as the VM's /init
// printed it.
type Package struct {
	Name    string  `json:"name"`
	Status  string  `json:"status"` // pass, fail, or "no verdict"
	Passed  int     `json:"passed"`
	Failed  int     `json:"failed"`
	Skipped int     `json:"skipped"`
	Seconds float64 `json:"seconds"`
}

// Write stores r as indented JSON.
func Write(path string, r Report) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// Read loads a report Write stored.
func Read(path string) (Report, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Report{}, err
	}
	var r Report
	if err := json.Unmarshal(b, &r); err != nil {
		return Report{}, fmt.Errorf("%s: %w", path, err)
	}
	return r, nil
}

// Markdown renders the README's kernel table: per boot the kernel, its
// Debian package, what the probe chose and the tests' totals.
func Markdown(r Report) string {
	var b strings.Builder
	fmt.Fprintf(&b, "`make test-kernels`, %s, %s (qemu TCG, 2 vCPUs on one host thread, %d VMs at once, tests with -short):\n\n",
		r.Date, r.Duration, r.Parallel)
	b.WriteString("| kernel | Debian package | backend | threading | features used | tests |\n|---|---|---|---|---|---|\n")
	for _, bt := range r.Boots {
		var passed, failed, skipped int
		for _, p := range bt.Packages {
			passed += p.Passed
			failed += p.Failed
			skipped += p.Skipped
		}
		result := fmt.Sprintf("%d passed, %d failed, %d skipped", passed, failed, skipped)
		if len(bt.Only) > 0 {
			result += " (" + strings.Join(bt.Only, ", ") + ")"
		}
		if !bt.OK {
			result += " (FAIL)"
		}
		release, backend := dash(bt.Release), dash(bt.Backend)
		if bt.Args != "" {
			release += " with `" + bt.Args + "`"
		}
		if bt.Expect != "io_uring" && bt.Reason != "" {
			backend += " (" + bt.Reason + ")"
		}
		fmt.Fprintf(&b, "| %s | `%s` %s | %s | %s | %s | %s |\n", release, bt.Package, bt.Version, backend, dash(bt.Threading), dash(bt.Features), cell(result))
	}
	return b.String()
}

// Missing is what the README's kernel section says while no run's report
// is committed.
func Missing(path string) string {
	return "No `make test-kernels` report is committed yet: the next full run writes `" + path + "` and `make bench-readme` renders its table here " +
		"(per kernel: the Debian package, the backend and threading mode the probe chose, the features it used, and the tests passed, failed and skipped). " +
		"The table shown here before was copied by hand from the 2026-11-27 run, whose report was not kept, and counted top-level tests only " +
		"(a test whose subtests all skipped counted as passed), so it is not repeated."
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func cell(s string) string { return strings.ReplaceAll(strings.ReplaceAll(s, "|", "/"), "\n", " ") }
