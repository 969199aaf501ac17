package main

import (
	"flag"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/ringloop/ringloop/internal/testsum"
)

// The allowlist of skips (tests/skips.txt, see package testsum) and the
// stage record of make test: a VM's skip must be on the allowlist under
// the stage "kernels/" + the boot's name, or the boot fails.
var (
	allowPath  = flag.String("allow", "", "allowlist of skips (tests/skips.txt); a skip it does not name fails its boot (empty: no check)")
	recordPath = flag.String("record", "", "file to append the run's stage record to (make test's summary)")
	allow      *testsum.Allowlist
)

// loadSkips reads the allowlist -allow names.
func loadSkips() error {
	if *allowPath == "" {
		return nil
	}
	a, err := testsum.ReadAllowlist(*allowPath)
	allow = a
	return err
}

// vmSkip is /init's line for a skipped leaf test.
var vmSkip = regexp.MustCompile(`^SKIP pkg=(\S+) test=(\S+) reason=(".*")$`)

// checkSkip records a skip line the allowlist does not name (package names
// in the VM are the directory path with dots, "internal.uring").
func (r *kernelResult) checkSkip(line string) {
	m := vmSkip.FindStringSubmatch(line)
	if m == nil || allow == nil {
		return
	}
	pkg := strings.ReplaceAll(m[1], ".", "/")
	if _, ok := allow.Allowed("kernels/"+r.name, pkg, m[2]); ok {
		return
	}
	reason, _ := strconv.Unquote(m[3])
	r.unlisted = append(r.unlisted, fmt.Sprintf("skip not in %s (stage kernels/%s): %s %s: %s", *allowPath, r.name, pkg, m[2], reason))
}

// recordStage appends the run's leaf counts and time to -record's file.
func recordStage(rs []*kernelResult, pkgs []string, took time.Duration) error {
	if *recordPath == "" {
		return nil
	}
	rec := testsum.StageRecord{Stage: "kernels", Tests: true, Seconds: took.Seconds(), OK: true}
	for _, r := range rs {
		rec.OK = rec.OK && r.ok(pkgs)
		for _, p := range r.packages(pkgs) {
			v, found := r.verdicts[p]
			if !found || v.status != "pass" && v.failed == 0 {
				rec.Counts.Failed++ // no verdict, or a failure outside any test
			}
			rec.Counts.Add(testsum.Counts{Passed: v.passed, Failed: v.failed, Skipped: v.skipped})
		}
	}
	fmt.Println(rec.Line())
	return testsum.AppendRecord(*recordPath, rec)
}
