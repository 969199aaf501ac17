// Package testenv runs a test under every backend, kernel profile and
// threading mode, and checks that it leaves no file descriptor or goroutine
// behind.
package testenv

import (
	"fmt"
	"net"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/internal/driver"
	"github.com/ringloop/ringloop/internal/uringcheck"
)

// Combo is one backend under one kernel profile in one threading mode.
type Combo struct {
	Backend   engine.Backend
	Profile   driver.Profile
	Threading engine.Threading
}

// String is "backend/profile/threading", the subtest name.
func (c Combo) String() string { return fmt.Sprintf("%s/%s/%s", c.Backend, c.Profile, c.Threading) }

// Options returns the loop options that select the combo.
func (c Combo) Options(more ...engine.Option) []engine.Option {
	return append([]engine.Option{engine.WithBackend(c.Backend), engine.WithDriverConfig(engine.DriverConfig{Profile: string(c.Profile)}),
		engine.WithThreading(c.Threading)}, more...)
}

// threadings lists the threading modes, the default (parked, on both
// backends) first.
var threadings = []engine.Threading{engine.ThreadingParked, engine.ThreadingLocked}

// Combos lists every backend this build has (io_uring needs liburing) under
// every kernel profile (those drivertest.ProfilesEnv names, if set) that the
// backend tells apart (see backendProfiles) in every threading mode.
func Combos() []Combo {
	var out []Combo
	for _, b := range testBackends() {
		for _, p := range backendProfiles(b) {
			for _, th := range threadings {
				out = append(out, Combo{b, p, th})
			}
		}
	}
	return out
}

// ForEach runs fn as a subtest for every combo. Where io_uring cannot run
// here, its subtests skip saying why (or fail when it is required, see
// package uringcheck).
func ForEach(t *testing.T, fn func(t *testing.T, c Combo)) {
	for _, c := range Combos() {
		t.Run(c.String(), func(t *testing.T) { c.Need(t); fn(t, c) })
	}
}

// ForEachBackend runs fn once per backend and threading mode, under the
// native profile: for tests whose subject does not depend on kernel
// features.
func ForEachBackend(t *testing.T, fn func(t *testing.T, c Combo)) {
	for _, c := range backendCombos() {
		t.Run(c.String(), func(t *testing.T) { c.Need(t); fn(t, c) })
	}
}

// backendCombos lists every backend in every threading mode, under the
// native profile.
func backendCombos() []Combo {
	var out []Combo
	for _, b := range testBackends() {
		for _, th := range threadings {
			out = append(out, Combo{b, driver.Native, th})
		}
	}
	return out
}

// ForEachParallel is ForEach with the combos' subtests run in parallel (up
// to -test.parallel at once), for tests that mostly wait on timeouts and
// peers. It checks leaks once for the whole test, after every subtest has
// ended: fn must not call CheckLeaks, t.Setenv or anything else a parallel
// test may not.
func ForEachParallel(t *testing.T, fn func(t *testing.T, c Combo)) {
	runParallel(t, Combos(), fn)
}

// ForEachBackendParallel is ForEachBackend as ForEachParallel runs it.
func ForEachBackendParallel(t *testing.T, fn func(t *testing.T, c Combo)) {
	runParallel(t, backendCombos(), fn)
}

// runParallel runs fn for each combo as a parallel subtest, checking leaks
// once for the whole test.
func runParallel(t *testing.T, combos []Combo, fn func(t *testing.T, c Combo)) {
	CheckLeaks(t)
	for _, c := range combos {
		t.Run(c.String(), func(t *testing.T) { t.Parallel(); c.Need(t); fn(t, c) })
	}
}

// Need skips t when the combo's backend cannot run here, saying why (or fails
// it when io_uring is required).
func (c Combo) Need(t testing.TB) {
	t.Helper()
	if c.Backend == engine.BackendUring {
		uringcheck.Need(t)
	}
}

// HaveUring reports whether io_uring can run here; where it cannot and is
// required, it fails t.
func HaveUring(t testing.TB) bool {
	t.Helper()
	if uringcheck.Unavailable() != "" && uringcheck.Required() {
		t.Fatal(uringcheck.Status())
	}
	return uringcheck.Unavailable() == ""
}

// RunsUring reports whether this build has the io_uring driver (it needs
// liburing) and io_uring can run here; where it is built but cannot run and is
// required, it fails t.
func RunsUring(t testing.TB) bool {
	t.Helper()
	return slices.Contains(testBackends(), engine.BackendUring) && HaveUring(t)
}

// CountFDs returns the number of open file descriptors of this process.
func CountFDs(t testing.TB) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatalf("reading /proc/self/fd: %v", err)
	}
	return len(ents)
}

// CheckLeaks records the fd and goroutine counts now and, at cleanup, fails
// the test if either has grown (waiting up to 20 seconds for goroutines
// that are finishing; generous, since only a failing test waits it out).
func CheckLeaks(t testing.TB) {
	t.Helper()
	netpollOnce.Do(startNetpoll)
	fds := CountFDs(t)
	before := openFDs()
	gs := runtime.NumGoroutine()
	t.Cleanup(func() {
		if t.Failed() {
			return
		}
		deadline := time.Now().Add(20 * time.Second)
		for {
			nf, ng := CountFDs(t), runtime.NumGoroutine()
			if nf <= fds && ng <= gs {
				return
			}
			if time.Now().After(deadline) {
				buf := make([]byte, 1<<16)
				n := runtime.Stack(buf, true)
				t.Errorf("leak: fds %d → %d (%s), goroutines %d → %d\n%s", fds, nf, newFDs(before), gs, ng,
					trimStacks(string(buf[:n])))
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
	})
}

var netpollOnce sync.Once

// startNetpoll makes Go's runtime open its netpoller (an epoll fd and an
// eventfd, opened on first use and kept for the process's life), so the first
// test to use the network is not charged with them.
func startNetpoll() {
	if ln, err := net.Listen("tcp", "127.0.0.1:0"); err == nil {
		ln.Close()
	}
}

// openFDs maps each open descriptor to what it refers to ("socket:[123]",
// "anon_inode:[io_uring]"), so a leak report can name what leaked.
func openFDs() map[string]string {
	out := map[string]string{}
	ents, _ := os.ReadDir("/proc/self/fd")
	for _, e := range ents {
		target, _ := os.Readlink("/proc/self/fd/" + e.Name())
		out[e.Name()] = target
	}
	return out
}

// newFDs lists the descriptors open now that were not (or referred to
// something else) in before.
func newFDs(before map[string]string) string {
	var out []string
	for fd, target := range openFDs() {
		if before[fd] != target {
			out = append(out, fd+"→"+target)
		}
	}
	slices.Sort(out)
	return strings.Join(out, ", ")
}

func trimStacks(s string) string {
	if len(s) > 8000 {
		return s[:8000] + "\n…"
	}
	return strings.TrimSpace(s)
}

// Eventually polls cond every millisecond until it holds or d passes.
func Eventually(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	if !Until(d, cond) {
		t.Fatalf("timed out after %v waiting for %s", d, what)
	}
}

// Until polls cond every millisecond until it holds (true) or d passes
// (false), for a caller that reports a failure with its own state.
func Until(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(time.Millisecond)
	}
	return true
}
