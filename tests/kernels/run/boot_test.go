package main

import (
	"strings"
	"testing"
)

// A failing package's console: the summary must name the failing subtest
// with its own log lines, and leave passing tests' lines out.
func TestParseKeepsFailingTestsLogs(t *testing.T) {
	console := strings.Join([]string{
		"KERNEL release=6.12.1 rmem_max=212992",
		"RUN pkg=tests",
		"OUTPUT-BEGIN pkg=tests",
		"=== RUN   TestA",
		"    a_test.go:1: fine",
		"--- PASS: TestA (0.01s)",
		"=== RUN   TestB",
		"=== RUN   TestB/epoll",
		"    testenv.go:129: leak: fds 6 → 6, goroutines 3 → 6",
		"=== RUN   TestB/uring",
		"--- FAIL: TestB (5.02s)",
		"    --- FAIL: TestB/epoll (5.01s)",
		"    --- PASS: TestB/uring (0.01s)",
		"FAIL",
		"OUTPUT-END pkg=tests (exit status 1)",
		"VERDICT pkg=tests status=fail passed=1 failed=1 skipped=0 seconds=5.1",
		"DONE",
	}, "\n")
	r := &kernelResult{verdicts: map[string]verdict{}}
	r.parse(strings.NewReader(console))
	got := strings.Join(r.failures, "\n")
	for _, want := range []string{"--- FAIL: TestB/epoll", "leak: fds 6 → 6"} {
		if !strings.Contains(got, want) {
			t.Errorf("failures lack %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "fine") {
		t.Errorf("failures hold a passing test's log:\n%s", got)
	}
	if v := r.verdicts["tests"]; v.status != "fail" || v.failed != 1 || v.passed != 1 {
		t.Errorf("verdict %+v", v)
	}
}
