package testsum

import (
	"fmt"
	"strings"
)

// Counts is how many leaf tests passed, failed and skipped.
type Counts struct {
	Passed  int `json:"passed"`
	Failed  int `json:"failed"`
	Skipped int `json:"skipped"`
}

// Add adds o to c.
func (c *Counts) Add(o Counts) {
	c.Passed += o.Passed
	c.Failed += o.Failed
	c.Skipped += o.Skipped
}

func (c Counts) String() string {
	return fmt.Sprintf("%d passed, %d failed, %d skipped", c.Passed, c.Failed, c.Skipped)
}

// Result is a test's outcome.
type Result string

// The outcomes a test can end with, as go test -json and -test.v name them
// (lower case).
const (
	Pass Result = "pass"
	Fail Result = "fail"
	Skip Result = "skip"
)

// Tally collects the results of the tests of one package.
type Tally struct {
	results map[string]Result
	order   []string
}

// NewTally returns an empty tally.
func NewTally() *Tally { return &Tally{results: map[string]Result{}} }

// Add records that test (its full name, subtests with slashes) ended with r.
// A test reported twice (-count=2) keeps the worst outcome.
func (t *Tally) Add(test string, r Result) {
	old, seen := t.results[test]
	if !seen {
		t.order = append(t.order, test)
	}
	if !seen || r == Fail || old == Skip {
		t.results[test] = r
	}
}

// Len is the number of tests recorded, leaves or not.
func (t *Tally) Len() int { return len(t.results) }

// Leaf is a test counted by Counts: a test none of whose subtests reported
// a result, or a test that failed on its own while all its subtests passed
// or skipped (a failing cleanup or leak check after the subtests).
type Leaf struct {
	Name   string
	Result Result
}

// Leaves returns the counted tests in the order they were first reported.
func (t *Tally) Leaves() []Leaf {
	hasChild := map[string]bool{}
	failedChild := map[string]bool{}
	for _, n := range t.order {
		for i := strings.LastIndexByte(n, '/'); i > 0; i = strings.LastIndexByte(n[:i], '/') {
			parent := n[:i]
			hasChild[parent] = true
			if t.results[n] == Fail {
				failedChild[parent] = true
			}
		}
	}
	var out []Leaf
	for _, n := range t.order {
		r := t.results[n]
		switch {
		case !hasChild[n]:
			out = append(out, Leaf{n, r})
		case r == Fail && !failedChild[n]:
			out = append(out, Leaf{n, Fail})
		}
	}
	return out
}

// Counts counts the leaves.
func (t *Tally) Counts() Counts {
	var c Counts
	for _, l := range t.Leaves() {
		switch l.Result {
		case Pass:
			c.Passed++
		case Fail:
			c.Failed++
		case Skip:
			c.Skipped++
		}
	}
	return c
}
