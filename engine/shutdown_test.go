package engine_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/internal/testenv"
)

func TestShutdownArgumentsValidated(t *testing.T) {
	l, err := engine.New(engine.WithBackend(engine.BackendEpoll))
	require.NoError(t, err)
	defer l.Close()
	_, err = l.ShutdownGracefully(-1, time.Second).Await(context.Background())
	require.Error(t, err)
	_, err = l.ShutdownGracefully(2*time.Second, time.Second).Await(context.Background())
	require.Error(t, err)
	require.Equal(t, engine.NotStarted, l.State(), "invalid arguments change nothing")
}

// TestShutdownQuietPeriod: with no work the loop ends one quiet period after
// the call; tasks submitted every 50 ms keep it alive until the timeout.
func TestShutdownQuietPeriod(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		const quiet = 150 * time.Millisecond
		l, err := engine.New(c.Options()...)
		require.NoError(t, err)
		require.NoError(t, l.ExecuteFunc(func() {}))
		start := time.Now()
		requireDone(t, l.ShutdownGracefully(quiet, 5*time.Second))
		took := time.Since(start)
		require.GreaterOrEqual(t, took, quiet-10*time.Millisecond, "ended before the quiet period")
		require.Less(t, took, quiet+time.Second, "quiet period overran")
	})
}

func TestShutdownTimeoutWins(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		const quiet, timeout = 200 * time.Millisecond, 600 * time.Millisecond
		l, err := engine.New(c.Options()...)
		require.NoError(t, err)
		stop := make(chan struct{})
		var wg sync.WaitGroup
		wg.Add(1)
		go func() { // a task every 50 ms: never a quiet period
			defer wg.Done()
			tk := time.NewTicker(50 * time.Millisecond)
			defer tk.Stop()
			for {
				select {
				case <-stop:
					return
				case <-tk.C:
					_ = l.ExecuteFunc(func() {})
				}
			}
		}()
		require.NoError(t, l.ExecuteFunc(func() {}))
		start := time.Now()
		requireDone(t, l.ShutdownGracefully(quiet, timeout))
		took := time.Since(start)
		close(stop)
		wg.Wait()
		require.GreaterOrEqual(t, took, timeout-10*time.Millisecond, "busy loop ended before its timeout")
		require.Less(t, took, timeout+time.Second)
	})
}

// TestAcceptedTasksAreNeverDropped races producers against shutdown: every
// Execute that returned nil ran; every other returned ErrShutdown.
func TestAcceptedTasksAreNeverDropped(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		for round := 0; round < scale(20, 4); round++ {
			l, err := engine.New(c.Options()...)
			require.NoError(t, err)
			var accepted, ran, refused atomic.Int64
			var wg sync.WaitGroup
			for range 4 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for {
						err := l.ExecuteFunc(func() { ran.Add(1) })
						if errors.Is(err, engine.ErrShutdown) {
							refused.Add(1)
							return
						}
						require.NoError(t, err)
						accepted.Add(1)
					}
				}()
			}
			testenv.Eventually(t, 5*time.Second, "some work", func() bool { return ran.Load() > 100 })
			requireDone(t, l.ShutdownGracefully(0, time.Second))
			wg.Wait()
			require.Equal(t, accepted.Load(), ran.Load(), "accepted tasks that never ran")
			require.EqualValues(t, 4, refused.Load())
		}
	})
}

func TestShutdownHooksAndTimersCancelled(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		l, err := engine.New(c.Options()...)
		require.NoError(t, err)
		var order []int
		l.AddShutdownHook(func() { order = append(order, 1) })
		id := l.AddShutdownHook(func() { order = append(order, 99) })
		l.AddShutdownHook(func() {
			order = append(order, 2)
			l.AddShutdownHook(func() { order = append(order, 3) })
		})
		require.True(t, l.RemoveShutdownHook(id))
		s, err := l.ScheduleFunc(func() { t.Error("a cancelled timer ran") }, time.Hour)
		require.NoError(t, err)
		requireDone(t, l.ShutdownGracefully(0, time.Second))
		require.Equal(t, []int{1, 2, 3}, order)
		require.True(t, s.IsCancelled(), "scheduled tasks are cancelled at shutdown")
		require.True(t, s.IsDone())
	})
}

func TestShutdownBeforeStart(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		l, err := engine.New(c.Options()...)
		require.NoError(t, err)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		l.ShutdownGracefully(0, time.Second)
		require.NoError(t, l.AwaitTermination(ctx))
		require.True(t, l.IsTerminated())
		require.ErrorIs(t, l.ExecuteFunc(func() {}), engine.ErrShutdown)
		_, err = l.Submit(func() error { return nil }).Await(ctx)
		require.ErrorIs(t, err, engine.ErrShutdown)
	})
}

// TestNoLeaksAcrossManyLoops builds, uses and closes loops and checks fds and
// goroutines come back to where they were.
func TestNoLeaksAcrossManyLoops(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		for range 5 {
			l, err := engine.New(c.Options()...)
			require.NoError(t, err)
			_, err = l.Submit(func() error { return nil }).Await(context.Background())
			require.NoError(t, err)
			require.NoError(t, l.Close())
		}
	})
}
