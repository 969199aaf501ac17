package taskq

import (
	"sync/atomic"
	"testing"

	"github.com/ringloop/ringloop/tasks"
)

// item is a pre-built task that names its producer and a sequence number.
type item struct {
	p, k int32
	ran  atomic.Int32
}

func (it *item) Run() { it.ran.Add(1) }

// items returns n pre-built items of producer p, numbered 0..n-1.
func items(p, n int) []*item {
	s := make([]*item, n)
	for i := range s {
		s[i] = &item{p: int32(p), k: int32(i)}
	}
	return s
}

// queueExecutor is an Executor backed by a Queue that the test drains by hand.
type queueExecutor struct {
	q      Queue
	onLoop atomic.Bool
	reject error
}

func newQueueExecutor() *queueExecutor { return &queueExecutor{q: NewUnbounded(0)} }

func (e *queueExecutor) Execute(t tasks.Task) error {
	if e.reject != nil {
		return e.reject
	}
	if !e.q.Offer(t) {
		return tasks.ErrRejected
	}
	return nil
}

func (e *queueExecutor) InEventLoop() bool { return e.onLoop.Load() }

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
