package engine_test

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/internal/testenv"
	"github.com/ringloop/ringloop/tasks"
)

// TestListenerRunsOnAFullLoop: a listener of a promise bound to a loop whose
// bounded task ring is full still runs on that loop (not inline on the
// goroutine that completed the promise, which breaks loop confinement).
func TestListenerRunsOnAFullLoop(t *testing.T) {
	testenv.ForEachBackend(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		l := newLoop(t, c, engine.WithMaxPendingTasks(16, nil))
		started, release := make(chan struct{}), make(chan struct{})
		require.NoError(t, l.Execute(tasks.Func(func() { close(started); <-release })))
		<-started
		for {
			err := l.Execute(tasks.Func(func() {}))
			if errors.Is(err, tasks.ErrRejected) {
				break
			}
			require.NoError(t, err)
		}
		p := tasks.NewPromise[int](l)
		onLoop := make(chan bool, 1)
		p.AddListener(nil, func(tasks.Future[int]) { onLoop <- l.InEventLoop() })
		require.True(t, p.Succeed(1))
		close(release)
		select {
		case in := <-onLoop:
			require.True(t, in, "the listener ran off its loop")
		case <-time.After(30 * time.Second):
			t.Fatal("the listener never ran")
		}
	})
}
