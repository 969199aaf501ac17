package timers

import (
	"fmt"
	"reflect"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ringloop/ringloop/tasks"
)

// fakeLoop is an owner whose queue the test drains by hand, playing the loop.
// InEventLoop answers what the test sets.
type fakeLoop struct {
	mu     sync.Mutex
	q      []tasks.Task
	onLoop atomic.Bool
	reject atomic.Bool
}

func (l *fakeLoop) Execute(t tasks.Task) error {
	if l.reject.Load() {
		return tasks.ErrShutdown
	}
	l.mu.Lock()
	l.q = append(l.q, t)
	l.mu.Unlock()
	return nil
}

func (l *fakeLoop) InEventLoop() bool { return l.onLoop.Load() }

// runQueued runs the queued tasks and returns how many ran.
func (l *fakeLoop) runQueued() int {
	n := 0
	for {
		l.mu.Lock()
		q := l.q
		l.q = nil
		l.mu.Unlock()
		if len(q) == 0 {
			return n
		}
		for _, t := range q {
			t.Run()
			n++
		}
	}
}

// fakeClock is a settable clock, safe from any goroutine.
type fakeClock struct{ ns atomic.Int64 }

func (c *fakeClock) now() int64  { return c.ns.Load() }
func (c *fakeClock) set(v int64) { c.ns.Store(v) }
func (c *fakeClock) add(d int64) { c.ns.Add(d) }
func newTestHeap(owner tasks.Executor) (*Heap, *fakeClock) {
	c := &fakeClock{}
	h := NewHeap(owner)
	h.SetClock(c.now)
	return h, c
}

// runAll is a PollDue callback that runs each task at once.
func runAll(t tasks.Task) { t.Run() }

// counter is a task counting its runs.
type counter struct{ n atomic.Int64 }

func (c *counter) Run() { c.n.Add(1) }

// equal fails t unless got deep-equals want (go.sum does not carry
// testify's dependencies, so the tests use the standard library only).
func equal(t testing.TB, want, got any, msg ...any) {
	t.Helper()
	if !reflect.DeepEqual(want, got) {
		t.Fatalf("got %v, want %v %s", got, want, fmt.Sprint(msg...))
	}
}

// check fails t unless cond holds.
func check(t testing.TB, cond bool, msg ...any) {
	t.Helper()
	if !cond {
		t.Fatal(append([]any{"check failed: "}, msg...)...)
	}
}

// panicValue returns what fn panicked with, or nil.
func panicValue(fn func()) (v any) {
	defer func() { v = recover() }()
	fn()
	return nil
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// runtimeGoexit ends the calling goroutine.
func runtimeGoexit() { runtime.Goexit() }
