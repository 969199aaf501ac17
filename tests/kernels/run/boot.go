package main

import (
	"bufio"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// kernelResult is what one boot reported.
type kernelResult struct {
	bootSpec
	release   string
	backend   string
	threading string
	features  string
	reason    string
	verdicts  map[string]verdict
	running   []string // packages started (RUN) and not yet ended (VERDICT)
	failures  []string // failing tests' lines from failing packages' output, for the summary
	unlisted  []string // skips the allowlist does not name
	done      bool     // /init printed DONE
	err       error    // qemu failed or timed out
	seconds   float64
}

type verdict struct {
	status                  string
	passed, failed, skipped int
	seconds                 float64
}

var (
	kernelLine  = regexp.MustCompile(`^KERNEL release=(\S+)`)
	probeLine   = regexp.MustCompile(`^PROBE backend=(\S+) threading=(\S+) features=(".*") reason=(".*")$`)
	probeErr    = regexp.MustCompile(`^PROBE error=(".*")$`)
	runLine     = regexp.MustCompile(`^RUN pkg=(\S+)`)
	verdictLine = regexp.MustCompile(`^VERDICT pkg=(\S+) status=(\S+) passed=(\d+) failed=(\d+) skipped=(\d+) seconds=([\d.]+)`)
)

// boot runs one kernel under qemu's TCG emulation (KVM is not used: it hung
// on these machines, and TCG boots in seconds), with the VM's own loopback
// as its only network, and parses the console as it comes. The whole
// console goes to logPath.
//
// The guest CPU is qemu's default model without CMPXCHG16B: under TCG
// (Debian's qemu 7.2, two vCPUs) the 6.12 kernel's slab fast path, which
// uses that instruction, double-faulted in two boots out of three; without
// it the kernel takes its own emulation of the instruction.
//
// The two vCPUs share one host thread (thread=single): with a thread each,
// qemu's TCG let a vCPU run kernel code the other had just patched (a static
// key's int3, text_poke_bp) from its stale translation; the 6.12 kernel
// died of "Oops: int3" in about one boot in six, at boot or in the middle of
// a package. The guest keeps two CPUs, but qemu runs one at a time (until
// it halts, or for at most 100 ms), so in the VM concurrency comes from
// preemption; the host suites cover truly parallel runs. One thread costs
// a boot about 1.4× the time; run boots one VM per host core at once to
// win it back.
//
// The command line tells /init (as its environment: the kernel hands it the
// words it does not know that hold no dot) which backend the probe must
// choose, ringloop_expect, which packages to run, ringloop_pkgs, which run
// their combos on io_uring only, ringloop_uringonly, and extra
// test flags, ringloop_testargs (base64url: a flag's dot would keep the word
// from /init).
func boot(b bootSpec, vmlinuz, initrd, logPath string, timeout time.Duration) *kernelResult {
	r := &kernelResult{bootSpec: b, verdicts: map[string]verdict{}}
	cmdline := kernelCmdline(b)
	fmt.Printf("test-kernels: booting %s (%s=%s; %s), limit %v\n", b.label, b.pkg, b.version, cmdline, timeout)
	start := time.Now()
	defer func() { r.seconds = time.Since(start).Seconds() }()

	logf, err := os.Create(logPath)
	if err != nil {
		r.err = err
		return r
	}
	defer logf.Close()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "qemu-system-x86_64",
		"-accel", "tcg,thread=single", "-cpu", "qemu64,-cx16", "-m", "2048", "-smp", "2",
		"-nographic", "-no-reboot", "-nic", "none",
		"-kernel", vmlinuz, "-initrd", initrd,
		"-append", cmdline)
	cmd.Stdin = nil // /dev/null: nothing types into the monitor
	cmd.Stderr = logf
	pipe, err := cmd.StdoutPipe()
	if err != nil {
		r.err = err
		return r
	}
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Start(); err != nil {
		r.err = fmt.Errorf("qemu-system-x86_64: %w (make deps installs qemu-system-x86)", err)
		return r
	}
	r.parse(io.TeeReader(pipe, logf))
	err = cmd.Wait()
	switch {
	case ctx.Err() != nil:
		r.err = fmt.Errorf("timed out after %v while running %s", timeout, strings.Join(r.running, ", "))
	case err != nil:
		r.err = fmt.Errorf("qemu: %w", err)
	case !r.done:
		r.err = fmt.Errorf("the VM stopped before /init finished (running: %q)", r.running)
	}
	if r.err != nil {
		fmt.Printf("test-kernels: %s: %v; console log %s\n", b.label, r.err, logPath)
	}
	return r
}

// parse reads the console, echoing the lines that matter (probe results,
// verdicts, skips and failing output) as they arrive.
func (r *kernelResult) parse(console io.Reader) {
	sc := bufio.NewScanner(console)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	inOutput := false
	var fx failureExcerpts
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), "\r")
		show := true
		switch {
		case strings.HasPrefix(line, "OUTPUT-BEGIN"):
			inOutput = true
		case strings.HasPrefix(line, "OUTPUT-END"):
			inOutput, fx = false, failureExcerpts{}
		case inOutput:
			r.failures = fx.add(r.failures, line)
		case line == "DONE":
			r.done = true
		case strings.HasPrefix(line, "SKIP"):
			r.checkSkip(line)
		case strings.HasPrefix(line, "REASON"), strings.HasPrefix(line, "SETUP-ERROR"):
		default:
			show = false
		}
		if m := kernelLine.FindStringSubmatch(line); m != nil {
			r.release, show = m[1], true
		}
		if m := probeLine.FindStringSubmatch(line); m != nil {
			r.backend, r.threading = m[1], m[2]
			r.features, _ = strconv.Unquote(m[3])
			r.reason, _ = strconv.Unquote(m[4])
			show = true
		}
		if m := probeErr.FindStringSubmatch(line); m != nil {
			r.backend = "none"
			r.reason, _ = strconv.Unquote(m[1])
			show = true
		}
		if m := runLine.FindStringSubmatch(line); m != nil {
			r.running = append(r.running, m[1])
		}
		if m := verdictLine.FindStringSubmatch(line); m != nil {
			v := verdict{status: m[2]}
			v.passed, _ = strconv.Atoi(m[3])
			v.failed, _ = strconv.Atoi(m[4])
			v.skipped, _ = strconv.Atoi(m[5])
			v.seconds, _ = strconv.ParseFloat(m[6], 64)
			r.verdicts[m[1]] = v
			r.running = slices.DeleteFunc(r.running, func(p string) bool { return p == m[1] })
			show = true
		}
		if show {
			fmt.Printf("  %s | %s\n", r.name, line)
		}
	}
}

// failureExcerpts picks, out of a failing package's -test.v output, what
// the summary needs to say which test failed and why: each failing test's
// own log lines (-test.v prints them between its "=== RUN" line and the
// next test's) under its "--- FAIL" line, and panics and timeouts.
type failureExcerpts struct {
	logs map[string][]string // a test's first log lines, by name
	cur  string              // the test whose log lines are arriving
	left int                 // lines still to keep after a panic or timeout
}

var (
	runStart  = regexp.MustCompile(`^=== (?:RUN|CONT|PAUSE|NAME)\s+(\S+)`)
	failStart = regexp.MustCompile(`^\s*--- FAIL: (\S+)`)
	fatalLine = regexp.MustCompile(`^panic: |^fatal error: |^\*\*\* Test killed`)
)

// add appends what line contributes to the excerpts kept so far.
func (x *failureExcerpts) add(kept []string, line string) []string {
	const perTest, most = 12, 300
	if len(kept) >= most {
		return kept
	}
	switch m := runStart.FindStringSubmatch(line); {
	case m != nil:
		x.cur = m[1]
		return kept
	case strings.HasPrefix(line, "--- ") || strings.HasPrefix(line, "    --- "):
		if m := failStart.FindStringSubmatch(line); m != nil {
			kept = append(kept, line)
			kept = append(kept, x.logs[m[1]]...)
		}
		x.cur = ""
		return kept
	case fatalLine.MatchString(line):
		x.left = perTest
	}
	if x.left > 0 {
		x.left--
		return append(kept, line)
	}
	if x.cur != "" {
		if x.logs == nil {
			x.logs = map[string][]string{}
		}
		if len(x.logs[x.cur]) < perTest {
			x.logs[x.cur] = append(x.logs[x.cur], "  "+line)
		}
	}
	return kept
}

// ok reports whether the kernel booted, its probe chose the expected
// backend, every package it runs passed, and every skip is on the allowlist.
func (r *kernelResult) ok(pkgs []string) bool {
	if r.err != nil || !r.done || r.backend != r.expect || len(r.unlisted) > 0 {
		return false
	}
	for _, p := range r.packages(pkgs) {
		if v, found := r.verdicts[p]; !found || v.status != "pass" {
			return false
		}
	}
	return true
}

// packages returns the packages this boot runs.
func (r *kernelResult) packages(all []string) []string {
	if len(r.only) > 0 {
		return r.only
	}
	return all
}

// runs reports whether this boot runs package p.
func (r *kernelResult) runs(p string) bool {
	return len(r.only) == 0 || slices.Contains(r.only, p)
}

// kernelCmdline is the command line a boot gives its kernel.
func kernelCmdline(b bootSpec) string {
	line := "console=ttyS0 panic=-1 ringloop_expect=" + b.expect
	if len(b.only) > 0 {
		line += " ringloop_pkgs=" + strings.Join(b.only, ",")
	}
	if b.args != "" {
		line += " " + b.args
	}
	if len(b.uringOnly) > 0 {
		line += " ringloop_uringonly=" + strings.Join(b.uringOnly, ",")
	}
	if b.testArgs != "" {
		line += " ringloop_testargs=" + base64.RawURLEncoding.EncodeToString([]byte(b.testArgs))
	}
	return line
}
