package tasks

import (
	"sync"
	"sync/atomic"
	"testing"
)

// queueExecutor is an Executor backed by a slice that the test drains by
// hand (run).
type queueExecutor struct {
	mu     sync.Mutex
	q      []Task
	onLoop atomic.Bool
	reject error
}

func newQueueExecutor() *queueExecutor { return &queueExecutor{} }

func (e *queueExecutor) Execute(t Task) error {
	if e.reject != nil {
		return e.reject
	}
	e.offer(t)
	return nil
}

func (e *queueExecutor) offer(t Task) {
	e.mu.Lock()
	e.q = append(e.q, t)
	e.mu.Unlock()
}

func (e *queueExecutor) InEventLoop() bool { return e.onLoop.Load() }

// len returns how many tasks wait.
func (e *queueExecutor) len() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.q)
}

// run runs the queued tasks, those they queue included, and returns how
// many ran.
func (e *queueExecutor) run() int {
	n := 0
	for {
		e.mu.Lock()
		if len(e.q) == 0 {
			e.mu.Unlock()
			return n
		}
		t := e.q[0]
		e.q = e.q[1:]
		e.mu.Unlock()
		t.Run()
		n++
	}
}

// must fails the test at once when ok is false.
func must(t *testing.T, ok bool, format string, args ...any) {
	t.Helper()
	if !ok {
		t.Fatalf(format, args...)
	}
}

// eq fails the test at once when got != want.
func eq[V comparable](t *testing.T, got, want V, what string) {
	t.Helper()
	if got != want {
		t.Fatalf("%s: got %v, want %v", what, got, want)
	}
}
