package testsum

import (
	"regexp"
	"strings"
)

// resultLine is a test's or subtest's result in -test.v output: subtests
// are indented by four spaces per level.
var resultLine = regexp.MustCompile(`^\s*--- (PASS|FAIL|SKIP): (\S+) \(`)

// ParseResultLine returns the test and its result if line is a -test.v
// result line ("--- PASS: TestX/sub (0.01s)").
func ParseResultLine(line string) (test string, r Result, ok bool) {
	m := resultLine.FindStringSubmatch(line)
	if m == nil {
		return "", "", false
	}
	return m[2], Result(strings.ToLower(m[1])), true
}

// testEvent is a -test.v line that says which test the following log lines
// belong to.
var testEvent = regexp.MustCompile(`^=== (?:RUN|CONT|NAME|PAUSE)\s+(\S+)`)

// Verbose counts a test binary's -test.v output, fed a line at a time, and
// keeps each skipped test's reason (its last log line before the skip).
type Verbose struct {
	tally   *Tally
	cur     string            // the test whose log lines are arriving
	lastLog map[string]string // each test's last log line
}

// NewVerbose returns an empty counter.
func NewVerbose() *Verbose { return &Verbose{tally: NewTally(), lastLog: map[string]string{}} }

// Line takes the next line of output.
func (v *Verbose) Line(line string) {
	if m := testEvent.FindStringSubmatch(line); m != nil {
		v.cur = m[1]
		return
	}
	if test, r, ok := ParseResultLine(line); ok {
		v.tally.Add(test, r)
		v.cur = "" // what follows a result line is the next result or a new test
		return
	}
	if v.cur != "" && strings.TrimSpace(line) != "" {
		v.lastLog[v.cur] = strings.TrimSpace(line)
	}
}

// Counts counts the leaf tests seen so far.
func (v *Verbose) Counts() Counts { return v.tally.Counts() }

// Skipped is a skipped leaf test and its reason.
type Skipped struct{ Test, Reason string }

// Skips lists the skipped leaf tests with their reasons.
func (v *Verbose) Skips() []Skipped {
	var out []Skipped
	for _, l := range v.tally.Leaves() {
		if l.Result == Skip {
			out = append(out, Skipped{l.Name, v.lastLog[l.Name]})
		}
	}
	return out
}
