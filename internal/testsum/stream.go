package testsum

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
)

// Event is one line of `go test -json` (the fields used here).
type Event struct {
	Action     string
	Package    string
	ImportPath string // build-output and build-fail events
	Test       string
	Output     string
	Elapsed    float64 // seconds, on pass, fail and skip
}

// Summary reads `go test -json` output, counts each package's leaf tests
// and checks skips against an allowlist. It prints what a reader of a
// non-verbose `go test` would see: package lines ("ok", "FAIL", build
// errors), the whole output of failing tests, and each skip with its
// reason; with Verbose, every output line.
type Summary struct {
	Stage   string     // the allowlist's stage name
	Module  string     // module path, stripped from import paths for the allowlist
	Allow   *Allowlist // nil allows no skip
	Verbose bool
	Out     io.Writer

	pkgs map[string]*pkgRun // each package's latest run
	runs []*pkgRun          // every run, in the order they started
	// Unlisted lists skips the allowlist does not name ("pkg Test: reason").
	Unlisted []string
	// Allowed lists the skips it names, with the allowlist's reason.
	Allowed []string
}

// pkgRun is one package's tests while its events arrive.
type pkgRun struct {
	name    string // the import path
	tally   *Tally
	output  map[string][]string // a running test's output, kept until it ends
	done    bool
	failed  bool
	elapsed float64 // the test binary's run, in seconds
}

// maxKept bounds the output lines kept for one test.
const maxKept = 5000

// Read consumes r to its end. Lines that are not JSON events are printed
// as they are.
func (s *Summary) Read(r io.Reader) error {
	if s.pkgs == nil {
		s.pkgs = map[string]*pkgRun{}
	}
	br := bufio.NewReaderSize(r, 1<<16)
	for {
		line, err := br.ReadString('\n')
		if line != "" {
			var e Event
			if strings.HasPrefix(line, "{") && json.Unmarshal([]byte(line), &e) == nil && e.Action != "" {
				s.event(e)
			} else {
				fmt.Fprint(s.Out, line)
			}
		}
		if err == io.EOF {
			s.finish()
			return nil
		}
		if err != nil {
			return err
		}
	}
}

func (s *Summary) pkg(name string) *pkgRun {
	p := s.pkgs[name]
	if p == nil || p.done { // a stage may run a package again (fuzz targets of one package, one go test each)
		p = &pkgRun{name: name, tally: NewTally(), output: map[string][]string{}}
		s.pkgs[name] = p
		s.runs = append(s.runs, p)
	}
	return p
}

func (s *Summary) event(e Event) {
	switch e.Action {
	case "build-output":
		fmt.Fprint(s.Out, e.Output)
		return
	case "build-fail", "start", "run", "pause", "cont", "bench":
		return
	}
	p := s.pkg(e.Package)
	if e.Test == "" {
		switch e.Action {
		case "output":
			if s.Verbose || e.Output != "PASS\n" {
				fmt.Fprint(s.Out, e.Output)
			}
		case "pass", "fail", "skip":
			p.elapsed = e.Elapsed
			s.endPackage(e.Package, p, e.Action == "fail")
		}
		return
	}
	switch e.Action {
	case "output":
		if s.Verbose {
			fmt.Fprint(s.Out, e.Output)
		} else if len(p.output[e.Test]) < maxKept {
			p.output[e.Test] = append(p.output[e.Test], e.Output)
		}
	case "pass", "fail", "skip":
		r := Result(e.Action)
		p.tally.Add(e.Test, r)
		out := p.output[e.Test]
		delete(p.output, e.Test)
		if !s.Verbose {
			switch r {
			case Fail:
				fmt.Fprint(s.Out, strings.Join(out, ""))
			case Skip:
				fmt.Fprint(s.Out, skipLines(out))
			}
		}
	}
}

// skipLines is a skipped test's result line with the log lines before it
// (its reason), without its RUN line.
func skipLines(out []string) string {
	var b strings.Builder
	for _, l := range out {
		if !strings.HasPrefix(l, "=== ") {
			b.WriteString(l)
		}
	}
	return b.String()
}

// endPackage closes a package: tests that never ended (a timeout, a panic)
// count as failed with their output shown, and a failed package without a
// failed test (a build failure, TestMain, an exit) counts as one failure.
func (s *Summary) endPackage(name string, p *pkgRun, failed bool) {
	if p.done {
		return
	}
	p.done, p.failed = true, failed
	for _, t := range p.tally.order {
		delete(p.output, t)
	}
	for t, out := range p.output {
		p.tally.Add(t, Fail)
		fmt.Fprint(s.Out, strings.Join(out, ""))
	}
	p.output = nil
	if failed && p.tally.Counts().Failed == 0 {
		p.tally.Add("(package)", Fail)
	}
	rel := s.rel(name)
	for _, l := range p.tally.Leaves() {
		if l.Result != Skip {
			continue
		}
		if why, ok := s.Allow.Allowed(s.Stage, rel, l.Name); ok {
			s.Allowed = append(s.Allowed, rel+" "+l.Name+" — "+why)
		} else {
			s.Unlisted = append(s.Unlisted, rel+" "+l.Name)
		}
	}
}

// finish ends the packages whose end never came (the go command died).
func (s *Summary) finish() {
	for _, p := range s.runs {
		if !p.done {
			s.endPackage(p.name, p, true)
		}
	}
}

func (s *Summary) rel(importPath string) string {
	if importPath == s.Module {
		return "."
	}
	return strings.TrimPrefix(importPath, s.Module+"/")
}

// Counts is the leaf count over every package read so far.
func (s *Summary) Counts() Counts {
	var c Counts
	for _, p := range s.runs {
		c.Add(p.tally.Counts())
	}
	return c
}

// Packages is how many package runs reported (a package run twice counts
// twice).
func (s *Summary) Packages() int { return len(s.runs) }

// PackageTime is how long a package's test binary ran.
type PackageTime struct {
	Package string
	Seconds float64
}

// Slowest returns the n packages whose tests ran longest, longest first: a
// stage lasts at least as long as its slowest package.
func (s *Summary) Slowest(n int) []PackageTime {
	var ps []PackageTime
	for _, p := range s.runs {
		ps = append(ps, PackageTime{s.rel(p.name), p.elapsed})
	}
	sort.SliceStable(ps, func(i, j int) bool { return ps[i].Seconds > ps[j].Seconds })
	return ps[:min(n, len(ps))]
}
