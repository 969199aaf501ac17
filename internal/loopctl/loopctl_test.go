package loopctl_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/internal/loopctl"
	"github.com/ringloop/ringloop/internal/testenv"
	"github.com/ringloop/ringloop/tasks"
)

// zeroOf is how a program outside the module can come by a loopctl.Task:
// type inference gives it the zero value of a type it cannot name.
func zeroOf[T any](func(T) error) T {
	var z T
	return z
}

// TestZeroTaskRefused: the only Task a user can make is refused, so the
// exported door queues nothing for them.
func TestZeroTaskRefused(t *testing.T) {
	l, err := engine.New(engine.WithBackend(engine.BackendEpoll))
	require.NoError(t, err)
	t.Cleanup(func() { _ = l.Close() })
	require.Error(t, l.Control(zeroOf(l.Control)))
}

// TestRunPassesFullTaskRing: Run queues on the control ring, which a user's
// full task ring does not refuse, and refuses only once the loop has shut
// down.
func TestRunPassesFullTaskRing(t *testing.T) {
	l, err := engine.New(engine.WithBackend(engine.BackendEpoll), engine.WithMaxPendingTasks(16, nil))
	require.NoError(t, err)
	release := testenv.FillTaskRing(t, l)
	ran := make(chan struct{})
	require.NoError(t, loopctl.Run(l, tasks.Func(func() { close(ran) })))
	release()
	select {
	case <-ran:
	case <-time.After(30 * time.Second):
		t.Fatal("the control task never ran")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	require.NoError(t, l.Shutdown(ctx))
	require.ErrorIs(t, loopctl.Run(l, tasks.Func(func() {})), engine.ErrShutdown)
}
