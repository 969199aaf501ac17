// Command testsum runs one stage of `make test` and says what it did in one
// line: the stage's time and, for a go test stage, its leaf tests' counts
// (N passed, N failed, N skipped) from `go test -json`. It passes through
// what a non-verbose go test prints (package lines, failing tests' output)
// plus each skip with its reason, and fails the stage on a skip that the
// allowlist (tests/skips.txt) does not name.
//
//	testsum -stage race -record bin/stages.jsonl -- go test -race -json ./...
//	testsum -stage vet -record bin/stages.jsonl -- go vet ./...
//	testsum -report bin/stages.jsonl
//
// The command's exit status is kept: a failing go test fails the stage
// even where the counts show no failure (a build error).
package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/ringloop/ringloop/internal/testsum"
)

func main() {
	stage := flag.String("stage", "", "stage name, for its line and the allowlist")
	allow := flag.String("allow", "", "allowlist of skips (stages package test — reason); empty allows none")
	record := flag.String("record", "", "file to append the stage's record to")
	report := flag.String("report", "", "print the stages recorded in this file and the total, then exit")
	verbose := flag.Bool("v", false, "print every test's output, not only failing tests' and skips")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: testsum -stage NAME [-allow FILE] [-record FILE] [-v] -- command [args]\n       testsum -report FILE")
		flag.PrintDefaults()
	}
	flag.Parse()
	if *report != "" {
		os.Exit(printReport(*report))
	}
	if *stage == "" || flag.NArg() == 0 {
		flag.Usage()
		os.Exit(2)
	}
	os.Exit(runStage(*stage, *allow, *record, *verbose, flag.Args()))
}

func printReport(path string) int {
	rs, err := testsum.ReadRecords(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, "testsum:", err)
		return 1
	}
	if !testsum.Report(os.Stdout, rs).OK {
		return 1
	}
	return 0
}

func runStage(stage, allowPath, record string, verbose bool, argv []string) int {
	var allow *testsum.Allowlist
	if allowPath != "" {
		var err error
		if allow, err = testsum.ReadAllowlist(allowPath); err != nil {
			fmt.Fprintln(os.Stderr, "testsum:", err)
			return 1
		}
	}
	s := &testsum.Summary{Stage: stage, Module: modulePath(), Allow: allow, Verbose: verbose, Out: os.Stdout}
	start := time.Now()
	fmt.Printf("testsum: stage %s runs %s\n", stage, strings.Join(argv, " "))
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stderr = os.Stdin, os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		fmt.Fprintln(os.Stderr, "testsum:", err)
		return 1
	}
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "testsum:", err)
		return 1
	}
	readErr := s.Read(out)
	if readErr != nil {
		_, _ = io.Copy(io.Discard, out)
	}
	runErr := cmd.Wait()

	rec := testsum.StageRecord{Stage: stage, Tests: s.Packages() > 0, Counts: s.Counts(), Seconds: time.Since(start).Seconds()}
	code := 0
	var ee *exec.ExitError
	switch {
	case errors.As(runErr, &ee):
		code = ee.ExitCode()
	case runErr != nil || readErr != nil:
		fmt.Fprintln(os.Stderr, "testsum:", errors.Join(runErr, readErr))
		code = 1
	}
	if code == 0 && rec.Counts.Failed > 0 {
		code = 1
	}
	for _, a := range s.Allowed {
		fmt.Printf("skipped (allowed): %s\n", a)
	}
	if len(s.Unlisted) > 0 {
		fmt.Printf("stage %s: %d skips not in the allowlist %s (make the test run, or add a line with the reason):\n", stage, len(s.Unlisted), orNone(allowPath))
		for _, u := range s.Unlisted {
			fmt.Printf("  %s\n", u)
		}
		if code == 0 {
			code = 1
		}
	}
	rec.OK = code == 0
	if slow := s.Slowest(3); len(slow) > 1 {
		var parts []string
		for _, p := range slow {
			parts = append(parts, fmt.Sprintf("%s %s", p.Package, testsum.FormatDuration(time.Duration(p.Seconds*float64(time.Second)))))
		}
		fmt.Printf("stage %s: slowest packages: %s\n", stage, strings.Join(parts, ", "))
	}
	fmt.Println(rec.Line())
	if record != "" {
		if err := testsum.AppendRecord(record, rec); err != nil {
			fmt.Fprintln(os.Stderr, "testsum:", err)
			return 1
		}
	}
	return code
}

// modulePath is the module path in ./go.mod, which allowlist entries leave
// out of package names.
func modulePath() string {
	f, err := os.Open("go.mod")
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if m, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "module "); ok {
			return strings.Trim(strings.TrimSpace(m), `"`)
		}
	}
	return ""
}

func orNone(p string) string {
	if p == "" {
		return "(none given)"
	}
	return p
}
