package engine_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/internal/testenv"
	"github.com/ringloop/ringloop/tasks"
)

// TestSubmit: a panic fails Submit's future with a *tasks.PanicError (value
// and stack, errors.Is tasks.ErrPanicked), a future can be cancelled before
// its function starts and not once it runs, and a nil function fails it.
func TestSubmit(t *testing.T) {
	testenv.ForEachBackend(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		l := newLoop(t, c)
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()

		_, err := engine.Submit(l, func() (int, error) { panic("in submit") }).Await(ctx)
		var pe *tasks.PanicError
		require.ErrorAs(t, err, &pe)
		require.Equal(t, "in submit", pe.Value)
		require.NotEmpty(t, pe.Stack)
		require.ErrorIs(t, err, tasks.ErrPanicked)

		boom := errors.New("boom")
		_, err = engine.Submit(l, func() (struct{}, error) { panic(boom) }).Await(ctx)
		require.ErrorIs(t, err, boom, "an error value stays reachable")
		require.ErrorIs(t, err, tasks.ErrPanicked)

		// Once running, the future cannot be cancelled: the result stands.
		running, release := make(chan struct{}), make(chan struct{})
		f := engine.Submit(l, func() (int, error) { close(running); <-release; return 7, nil })
		<-running
		require.False(t, f.Cancel(), "cancelled while running")
		close(release)
		v, err := f.Await(ctx)
		require.NoError(t, err)
		require.Equal(t, 7, v)

		// Before it runs, it can: the function never runs.
		block, unblock := make(chan struct{}), make(chan struct{})
		require.NoError(t, l.Execute(tasks.Func(func() { close(block); <-unblock })))
		<-block
		ran := false
		g := engine.Submit(l, func() (int, error) { ran = true; return 1, nil })
		require.True(t, g.Cancel())
		close(unblock)
		_, err = engine.Submit(l, func() (struct{}, error) { return struct{}{}, nil }).Await(ctx)
		require.NoError(t, err)
		require.False(t, ran, "a cancelled task ran")
		require.ErrorIs(t, g.Err(), tasks.ErrCancelled)

		_, err = engine.Submit[int](l, nil).Await(ctx)
		require.Error(t, err)
	})
}
