package testenv

import (
	"errors"
	"sync"
	"testing"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/tasks"
)

// FillTaskRing holds l in a task and fills its bounded task ring
// (engine.WithMaxPendingTasks) until Execute refuses with ErrRejected; the
// returned release lets the loop go (it also runs at cleanup). The tests of
// the control path use it to prove that the library's own work still
// happens while the user's ring is full.
func FillTaskRing(t testing.TB, l *engine.Loop) (release func()) {
	t.Helper()
	hold, running := make(chan struct{}), make(chan struct{})
	if err := l.Execute(tasks.Func(func() { close(running); <-hold })); err != nil {
		t.Fatalf("hold the loop: %v", err)
	}
	<-running
	for i := 0; ; i++ {
		err := l.Execute(tasks.Func(func() {}))
		if err != nil {
			if !errors.Is(err, tasks.ErrRejected) {
				t.Fatalf("filling the task ring: %v, want ErrRejected", err)
			}
			break
		}
		if i >= 1<<16 {
			t.Fatal("the task ring never filled: is it bounded?")
		}
	}
	var once sync.Once
	release = func() { once.Do(func() { close(hold) }) }
	t.Cleanup(release)
	return release
}
