package testsum

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

// A test whose subtests all skip counts as skipped, not passed; a parent
// that failed on its own after passing subtests counts once.
func TestLeaves(t *testing.T) {
	tl := NewTally()
	tl.Add("TestA", Pass)
	tl.Add("TestB/epoll", Skip)
	tl.Add("TestB/uring", Skip)
	tl.Add("TestB", Pass)
	tl.Add("TestC/x", Pass)
	tl.Add("TestC", Fail) // its cleanup failed
	tl.Add("TestD/x", Fail)
	tl.Add("TestD", Fail)
	tl.Add("TestD2", Pass) // shares TestD's prefix, is not its child
	want := Counts{Passed: 3, Failed: 2, Skipped: 2}
	if got := tl.Counts(); got != want {
		t.Fatalf("counts %v, want %v (leaves %v)", got, want, tl.Leaves())
	}
}

func TestAllowlist(t *testing.T) {
	a, err := ParseAllowlist(strings.NewReader(`
# comment
race  tests  TestAllocs — the race detector allocates
kernels/*,nocgo  looptls  TestOpenSSL/** — the VMs carry no openssl
*  internal/uring  TestX/*/epoll — no such thing on epoll
kernels/6.12-nouring  engine  **/io_uring/** — io_uring is off
`))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		stage, pkg, test string
		ok               bool
	}{
		{"race", "tests", "TestAllocs", true},
		{"full", "tests", "TestAllocs", false},
		{"race", "tests", "TestAllocs/sub", false},
		{"kernels/5.10", "looptls", "TestOpenSSL/epoll/parked", true},
		{"kernels/6.12-nouring", "looptls", "TestOpenSSL", true},
		{"kernels/5.10", "looptls", "TestOpenSSLx", false},
		{"kernels", "looptls", "TestOpenSSL", false},
		{"race", "looptls", "TestOpenSSL/epoll", false},
		{"any", "internal/uring", "TestX/a/epoll", true},
		{"any", "internal/uring", "TestX/a/b/epoll", false},
		{"kernels/6.12-nouring", "engine", "TestA/io_uring/native/parked", true},
		{"kernels/6.12-nouring", "engine", "TestA/sub/io_uring", true},
		{"kernels/6.12-nouring", "engine", "TestA/epoll/native/parked", false},
		{"kernels/6.12", "engine", "TestA/io_uring/native/parked", false},
	} {
		if _, ok := a.Allowed(c.stage, c.pkg, c.test); ok != c.ok {
			t.Errorf("Allowed(%s, %s, %s) = %v, want %v", c.stage, c.pkg, c.test, ok, c.ok)
		}
	}
	for _, bad := range []string{"race tests TestA", "race tests TestA —  ", "tests TestA — why", "race tests Test[ — why", "race[ tests T — why"} {
		if _, err := ParseAllowlist(strings.NewReader(bad)); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

// go test -json output: passing tests' output is dropped, a failing test's
// is shown, a skip is shown with its reason and checked against the
// allowlist, a package that failed outside any test counts one failure.
func TestSummary(t *testing.T) {
	in := strings.Join([]string{
		`{"Action":"start","Package":"m/a"}`,
		`{"Action":"run","Package":"m/a","Test":"TestOK"}`,
		`{"Action":"output","Package":"m/a","Test":"TestOK","Output":"=== RUN   TestOK\n"}`,
		`{"Action":"output","Package":"m/a","Test":"TestOK","Output":"    a_test.go:1: noise\n"}`,
		`{"Action":"output","Package":"m/a","Test":"TestOK","Output":"--- PASS: TestOK (0.00s)\n"}`,
		`{"Action":"pass","Package":"m/a","Test":"TestOK"}`,
		`{"Action":"output","Package":"m/a","Test":"TestBad","Output":"=== RUN   TestBad\n"}`,
		`{"Action":"output","Package":"m/a","Test":"TestBad","Output":"    a_test.go:2: broken\n"}`,
		`{"Action":"output","Package":"m/a","Test":"TestBad","Output":"--- FAIL: TestBad (0.00s)\n"}`,
		`{"Action":"fail","Package":"m/a","Test":"TestBad"}`,
		`{"Action":"output","Package":"m/a","Test":"TestSk/x","Output":"    a_test.go:3: no openssl\n"}`,
		`{"Action":"output","Package":"m/a","Test":"TestSk/x","Output":"    --- SKIP: TestSk/x (0.00s)\n"}`,
		`{"Action":"skip","Package":"m/a","Test":"TestSk/x"}`,
		`{"Action":"pass","Package":"m/a","Test":"TestSk"}`,
		`{"Action":"output","Package":"m/a","Test":"TestAl","Output":"--- SKIP: TestAl (0.00s)\n"}`,
		`{"Action":"skip","Package":"m/a","Test":"TestAl"}`,
		`{"Action":"output","Package":"m/a","Output":"FAIL\tm/a\t0.1s\n"}`,
		`{"Action":"fail","Package":"m/a"}`,
		`{"Action":"output","Package":"m/b","Output":"panic: in TestMain\n"}`,
		`{"Action":"fail","Package":"m/b"}`,
		`not json`,
		`{"Action":"output","Package":"m/c","Test":"TestHang","Output":"=== RUN   TestHang\n"}`,
		`{"Action":"output","Package":"m/c","Output":"panic: test timed out\n"}`,
		`{"Action":"fail","Package":"m/c"}`,
		``,
	}, "\n")
	allow, err := ParseAllowlist(strings.NewReader("race a TestAl — a reason\n"))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	s := &Summary{Stage: "race", Module: "m", Allow: allow, Out: &out}
	if err := s.Read(strings.NewReader(in)); err != nil {
		t.Fatal(err)
	}
	want := Counts{Passed: 1, Failed: 3, Skipped: 2}
	if got := s.Counts(); got != want {
		t.Errorf("counts %v, want %v", got, want)
	}
	if len(s.Unlisted) != 1 || s.Unlisted[0] != "a TestSk/x" {
		t.Errorf("unlisted %q", s.Unlisted)
	}
	if len(s.Allowed) != 1 || !strings.Contains(s.Allowed[0], "a reason") {
		t.Errorf("allowed %q", s.Allowed)
	}
	got := out.String()
	for _, w := range []string{"broken", "--- FAIL: TestBad", "no openssl", "--- SKIP: TestSk/x", "FAIL\tm/a", "panic: in TestMain", "not json", "=== RUN   TestHang"} {
		if !strings.Contains(got, w) {
			t.Errorf("output lacks %q:\n%s", w, got)
		}
	}
	if strings.Contains(got, "noise") {
		t.Errorf("output holds a passing test's log:\n%s", got)
	}
}

func TestParseResultLine(t *testing.T) {
	for _, c := range []struct {
		line, test string
		r          Result
	}{
		{"--- PASS: TestA (0.01s)", "TestA", Pass},
		{"        --- SKIP: TestA/b/c (0.00s)", "TestA/b/c", Skip},
		{"--- FAIL: TestA/x#01 (1.50s)", "TestA/x#01", Fail},
		{"=== RUN   TestA", "", ""},
		{"    a_test.go:1: --- PASS: looks like one", "", ""},
	} {
		test, r, ok := ParseResultLine(c.line)
		if test != c.test || r != c.r || ok != (c.test != "") {
			t.Errorf("%q: %q %q %v", c.line, test, r, ok)
		}
	}
}

// -test.v output as a test binary prints it in the VMs: subtests' results
// come after their parent's, so a skip's reason is the test's own last log
// line, not the line before its result.
func TestVerbose(t *testing.T) {
	out := `=== RUN   TestOpenSSL
=== RUN   TestOpenSSL/epoll/native/parked
    interop_test.go:105: openssl is not installed
=== RUN   TestOpenSSL/uring/native/parked
    interop_test.go:105: openssl is not installed (uring)
--- PASS: TestOpenSSL (0.01s)
    --- SKIP: TestOpenSSL/epoll/native/parked (0.00s)
    --- SKIP: TestOpenSSL/uring/native/parked (0.00s)
=== RUN   TestA
    a_test.go:1: log
--- PASS: TestA (0.00s)
=== RUN   TestB
--- FAIL: TestB (0.00s)
FAIL
`
	v := NewVerbose()
	for _, l := range strings.Split(out, "\n") {
		v.Line(l)
	}
	if got, want := v.Counts(), (Counts{Passed: 1, Failed: 1, Skipped: 2}); got != want {
		t.Errorf("counts %v, want %v", got, want)
	}
	want := []Skipped{{"TestOpenSSL/epoll/native/parked", "interop_test.go:105: openssl is not installed"},
		{"TestOpenSSL/uring/native/parked", "interop_test.go:105: openssl is not installed (uring)"}}
	if got := v.Skips(); len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("skips %q, want %q", got, want)
	}
}

func TestSlowest(t *testing.T) {
	in := `{"Action":"pass","Package":"m/a","Elapsed":3.5}
{"Action":"pass","Package":"m/b","Elapsed":70}
{"Action":"fail","Package":"m/c","Elapsed":12}
`
	s := &Summary{Module: "m", Out: &bytes.Buffer{}}
	if err := s.Read(strings.NewReader(in)); err != nil {
		t.Fatal(err)
	}
	got := s.Slowest(2)
	if len(got) != 2 || got[0] != (PackageTime{"b", 70}) || got[1] != (PackageTime{"c", 12}) {
		t.Errorf("slowest %v", got)
	}
}

// TestPackageRunTwice: a stage that runs one package's tests twice (make
// fuzz runs two fuzz targets of websocket, one go test each) counts both
// runs; the second run's output once crashed the summary (its package had
// ended and dropped its output map).
func TestPackageRunTwice(t *testing.T) {
	run := strings.Join([]string{
		`{"Action":"start","Package":"m/w"}`,
		`{"Action":"run","Package":"m/w","Test":"FuzzA"}`,
		`{"Action":"output","Package":"m/w","Test":"FuzzA","Output":"fuzz: elapsed: 0s\n"}`,
		`{"Action":"pass","Package":"m/w","Test":"FuzzA"}`,
		`{"Action":"pass","Package":"m/w"}`,
	}, "\n") + "\n"
	var out bytes.Buffer
	s := &Summary{Stage: "fuzz", Module: "m", Out: &out}
	if err := s.Read(strings.NewReader(run + strings.ReplaceAll(run, "FuzzA", "FuzzB"))); err != nil {
		t.Fatal(err)
	}
	if got, want := s.Counts(), (Counts{Passed: 2}); got != want {
		t.Errorf("counts %v, want %v", got, want)
	}
	if s.Packages() != 2 {
		t.Errorf("%d package runs, want 2", s.Packages())
	}
}

// TestRepositoryAllowlist: tests/skips.txt parses, and its every-stage
// entries reach the kernel boots too (a bare `*` stops at the slash of
// "kernels/6.1": the VMs once failed on skips the host allowed).
func TestRepositoryAllowlist(t *testing.T) {
	f, err := os.Open("../../tests/skips.txt")
	if os.IsNotExist(err) {
		t.Skip("no source tree here (a test binary copied alone, as in the kernel VMs)")
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	a, err := ParseAllowlist(f)
	if err != nil {
		t.Fatal(err)
	}
	for _, stage := range []string{"race", "nocgo", "kernels/5.10", "kernels/6.12-nouring"} {
		for _, c := range [][2]string{{"tests", "TestChildUringGate"}, {"httpserver", "FuzzParser/seed#104"}} {
			if _, ok := a.Allowed(stage, c[0], c[1]); !ok {
				t.Errorf("%s %s %s: not allowed", stage, c[0], c[1])
			}
		}
	}
	if _, ok := a.Allowed("kernels/6.1", "engine", "TestHandoff"); ok {
		t.Error("engine TestHandoff allowed to skip on 6.1, which has MSG_RING")
	}
}
