package testsum

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path"
	"strings"
)

// Allowlist is the set of skips a run accepts, each with its reason. A line
// of its file is
//
//	stages  package  test  — reason
//
// where stages is a comma-separated list of path.Match patterns of stage
// names (as make test's stages give them with -stage: "race", "nocgo"...;
// the kernel VMs' are "kernels/" and the boot's name, "kernels/5.10",
// "kernels/6.12-nouring"), package is the import
// path inside the module ("looptls", "internal/uring"), and test is the
// test's full name with each slash-separated element a path.Match pattern
// or "**", which matches any number of elements ("**/io_uring/**"). The reason
// is required: it is what a reader of the allowlist checks. "#" starts a
// comment line.
type Allowlist struct {
	entries []allowEntry
}

type allowEntry struct {
	stages []string
	pkg    string
	test   []string
	reason string
	line   int
}

// ReadAllowlist reads the allowlist file at p.
func ReadAllowlist(p string) (*Allowlist, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	a, err := ParseAllowlist(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	return a, nil
}

// ParseAllowlist reads an allowlist.
func ParseAllowlist(r io.Reader) (*Allowlist, error) {
	a := &Allowlist{}
	sc := bufio.NewScanner(r)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		head, reason, found := strings.Cut(line, "—")
		if !found {
			head, reason, found = strings.Cut(line, " -- ")
		}
		reason = strings.TrimSpace(reason)
		if !found || reason == "" {
			return nil, fmt.Errorf("line %d: want `stages package test — reason`: %q", n, line)
		}
		fs := strings.Fields(head)
		if len(fs) != 3 {
			return nil, fmt.Errorf("line %d: want stages, package and test before the reason: %q", n, line)
		}
		e := allowEntry{stages: strings.Split(fs[0], ","), pkg: fs[1], test: strings.Split(fs[2], "/"), reason: reason, line: n}
		for _, el := range append(e.test[:len(e.test):len(e.test)], e.stages...) {
			if _, err := path.Match(el, ""); err != nil {
				return nil, fmt.Errorf("line %d: pattern %q: %w", n, el, err)
			}
		}
		a.entries = append(a.entries, e)
	}
	return a, sc.Err()
}

// Allowed returns the reason the allowlist gives for skipping test of pkg
// (the import path inside the module) in stage, and whether it does.
func (a *Allowlist) Allowed(stage, pkg, test string) (string, bool) {
	if a == nil {
		return "", false
	}
	for _, e := range a.entries {
		if e.pkg == pkg && e.inStage(stage) && matchTest(e.test, strings.Split(test, "/")) {
			return e.reason, true
		}
	}
	return "", false
}

func (e allowEntry) inStage(stage string) bool {
	for _, s := range e.stages {
		if ok, _ := path.Match(s, stage); ok {
			return true
		}
	}
	return false
}

// matchTest matches a test's name elements against a pattern's: "**"
// matches any number of elements, none included.
func matchTest(pattern, name []string) bool {
	if len(pattern) == 0 {
		return len(name) == 0
	}
	if pattern[0] == "**" {
		for i := 0; i <= len(name); i++ {
			if matchTest(pattern[1:], name[i:]) {
				return true
			}
		}
		return false
	}
	if len(name) == 0 {
		return false
	}
	ok, _ := path.Match(pattern[0], name[0])
	return ok && matchTest(pattern[1:], name[1:])
}
