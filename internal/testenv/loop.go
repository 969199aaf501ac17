package testenv

import (
	"context"
	"testing"
	"time"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/tasks"
)

// NewLoop builds a loop for the combo and closes it at cleanup.
func NewLoop(t testing.TB, c Combo, opts ...engine.Option) *engine.Loop {
	t.Helper()
	l, err := engine.New(c.Options(opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	return l
}

// OnLoop runs fn on l and returns its result (30 s at most).
func OnLoop[T any](t testing.TB, l *engine.Loop, fn func() T) T {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	v, err := engine.Submit(l, func() (T, error) { return fn(), nil }).Await(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// Busy occupies the loop with a task that runs until the returned channel
// is closed, and returns once that task has started.
func Busy(t testing.TB, l *engine.Loop) chan struct{} {
	t.Helper()
	block, started := make(chan struct{}), make(chan struct{})
	if err := l.Execute(tasks.Func(func() { close(started); <-block })); err != nil {
		t.Fatal(err)
	}
	<-started
	return block
}

// Scale is normal, or small under the race detector and -short: the size
// of a test's rounds.
func Scale(normal, small int) int {
	if raceEnabled || testing.Short() {
		return small
	}
	return normal
}
