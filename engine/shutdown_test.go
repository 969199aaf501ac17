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
	"github.com/ringloop/ringloop/tasks"
)

func TestShutdownArgumentsValidated(t *testing.T) {
	l, err := engine.New(engine.WithBackend(engine.BackendEpoll))
	require.NoError(t, err)
	defer l.Close()
	require.Error(t, l.ShutdownGracefully(-1, time.Second))
	require.Error(t, l.ShutdownGracefully(2*time.Second, time.Second))
	require.Equal(t, engine.NotStarted, l.State(), "invalid arguments change nothing")
}

// TestShutdownQuietPeriod: with no work the loop ends one quiet period after
// the call at the earliest, even when its last task ran long before (the
// loop runs that task before Execute returns here, and this goroutine may
// not run again for a while on a loaded machine). The timeout is far away:
// that the loop ends at all shows the quiet period ended it.
func TestShutdownQuietPeriod(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		const quiet = 150 * time.Millisecond
		l, err := engine.New(c.Options()...)
		require.NoError(t, err)
		_, err = engine.Submit(l, func() (struct{}, error) { return struct{}{}, nil }).Await(context.Background())
		require.NoError(t, err)
		start := time.Now()
		shutdownWithin(t, l, quiet, time.Hour, time.Minute)
		require.GreaterOrEqual(t, time.Since(start), quiet, "ended before the quiet period")
	})
}

// TestShutdownTimeoutWins: work at every check keeps the quiet period from
// ever coming (a shutdown hook queues a task that adds the hook again), so
// only the timeout ends the loop, and not before it.
func TestShutdownTimeoutWins(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		const quiet, timeout = 200 * time.Millisecond, 600 * time.Millisecond
		l, err := engine.New(c.Options()...)
		require.NoError(t, err)
		var hook func()
		var hooks atomic.Int64
		hook = func() {
			hooks.Add(1)
			_ = l.Execute(tasks.Func(func() {
				if l.State() < engine.Shutdown {
					l.AddShutdownHook(hook)
				}
			}))
		}
		l.AddShutdownHook(hook)
		require.NoError(t, l.Execute(tasks.Func(func() {})))
		start := time.Now()
		shutdownWithin(t, l, quiet, timeout, time.Minute)
		require.GreaterOrEqual(t, time.Since(start), timeout, "busy loop ended before its timeout")
		require.Greater(t, hooks.Load(), int64(1), "the hook ran again while the loop shut down")
	})
}

// shutdownWithin shuts l down gracefully and waits for it with Shutdown,
// which keeps the quiet period, failing the test if it has not terminated
// within d (a bound for liveness, far above the expected time).
func shutdownWithin(t testing.TB, l *engine.Loop, quiet, timeout, d time.Duration) {
	t.Helper()
	require.NoError(t, l.ShutdownGracefully(quiet, timeout))
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	require.NoError(t, l.Shutdown(ctx))
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
						err := l.Execute(tasks.Func(func() { ran.Add(1) }))
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
			require.NoError(t, l.Close())
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
		remove := l.AddShutdownHook(func() { order = append(order, 99) })
		l.AddShutdownHook(func() {
			order = append(order, 2)
			l.AddShutdownHook(func() { order = append(order, 3) })
		})
		require.True(t, remove())
		require.False(t, remove(), "removed twice")
		s, err := l.Schedule(tasks.Func(func() { t.Error("a cancelled timer ran") }), time.Hour)
		require.NoError(t, err)
		require.NoError(t, l.Close())
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
		require.NoError(t, l.Shutdown(ctx))
		require.Equal(t, engine.Terminated, l.State())
		require.ErrorIs(t, l.Execute(tasks.Func(func() {})), engine.ErrShutdown)
		_, err = engine.Submit(l, func() (struct{}, error) { return struct{}{}, nil }).Await(ctx)
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
			_, err = engine.Submit(l, func() (struct{}, error) { return struct{}{}, nil }).Await(context.Background())
			require.NoError(t, err)
			require.NoError(t, l.Close())
		}
	})
}

// TestShutdownWaitsForTermination: Shutdown returns nil once the loop has
// terminated, and by then Done is closed.
func TestShutdownWaitsForTermination(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		l, err := engine.New(c.Options()...)
		require.NoError(t, err)
		_, err = engine.Submit(l, func() (struct{}, error) { return struct{}{}, nil }).Await(context.Background())
		require.NoError(t, err)
		select {
		case <-l.Done():
			t.Fatal("Done closed before the shutdown")
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		require.NoError(t, l.Shutdown(ctx))
		require.Equal(t, engine.Terminated, l.State())
		select {
		case <-l.Done():
		default:
			t.Fatal("Done not closed after Shutdown returned nil")
		}
		require.NoError(t, l.Shutdown(ctx), "a second Shutdown returns at once")
		require.NoError(t, l.Close())
	})
}

// TestShutdownContextEndsFirst: a loop busy in a task cannot terminate, so
// Shutdown with an expired context returns its error; the shutdown goes on
// and the loop terminates once the task ends.
func TestShutdownContextEndsFirst(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		l, err := engine.New(c.Options()...)
		require.NoError(t, err)
		block := busy(t, l)
		ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
		defer cancel()
		require.ErrorIs(t, l.Shutdown(ctx), context.DeadlineExceeded)
		require.GreaterOrEqual(t, l.State(), engine.ShuttingDown, "the shutdown has begun")
		close(block)
		waitDone(t, l.Done(), time.Minute)
		require.Equal(t, engine.Terminated, l.State())
	})
}

func TestDoneDoesNotAllocate(t *testing.T) {
	l, err := engine.New(engine.WithBackend(engine.BackendEpoll))
	require.NoError(t, err)
	defer l.Close()
	require.Zero(t, testing.AllocsPerRun(100, func() { _ = l.Done() }))
	require.Equal(t, l.Done(), l.Done(), "one channel for every call")
}

// waitDone fails the test if done is not closed within d (a liveness bound
// far above the expected time).
func waitDone(t testing.TB, done <-chan struct{}, d time.Duration) {
	t.Helper()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("not terminated within %v", d)
	}
}
