package main

import (
	"strings"
	"testing"

	"github.com/ringloop/ringloop/internal/testsum"
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

// A skip the allowlist names for this boot passes; any other fails the
// boot, named with its reason.
func TestUnlistedSkipFailsBoot(t *testing.T) {
	a, err := testsum.ParseAllowlist(strings.NewReader("kernels/*  looptls  TestOpenSSL/** — a reason\n"))
	if err != nil {
		t.Fatal(err)
	}
	allow = a
	defer func() { allow = nil }()
	console := strings.Join([]string{
		"KERNEL release=6.12.1 rmem_max=212992",
		`PROBE backend=io_uring threading=parked features="" reason="auto"`,
		"RUN pkg=looptls",
		`SKIP pkg=looptls test=TestOpenSSL/uring/native/parked reason="no openssl"`,
		"VERDICT pkg=looptls status=pass passed=3 failed=0 skipped=1 seconds=5.1",
		"RUN pkg=internal.uring",
		`SKIP pkg=internal.uring test=TestX reason="x_test.go:1: no such thing"`,
		"VERDICT pkg=internal.uring status=pass passed=3 failed=0 skipped=1 seconds=5.1",
		"DONE",
	}, "\n")
	r := &kernelResult{bootSpec: bootSpec{name: "6.12", expect: "io_uring"}, verdicts: map[string]verdict{}}
	r.parse(strings.NewReader(console))
	if len(r.unlisted) != 1 || !strings.Contains(r.unlisted[0], "internal/uring TestX: x_test.go:1: no such thing") {
		t.Fatalf("unlisted %q", r.unlisted)
	}
	if r.ok([]string{"looptls", "internal.uring"}) {
		t.Fatal("a boot with an unlisted skip passed")
	}
}
