package engine_test

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/internal/driver"
	"github.com/ringloop/ringloop/internal/testenv"
	"github.com/ringloop/ringloop/tasks"
)

// newLoop builds a loop for the combo and closes it at cleanup.
func newLoop(t *testing.T, c testenv.Combo, opts ...engine.Option) *engine.Loop {
	t.Helper()
	return testenv.NewLoop(t, c, opts...)
}

func TestLazyStartAndStates(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		l := newLoop(t, c)
		require.Equal(t, engine.NotStarted, l.State())
		require.False(t, l.InEventLoop())
		require.Contains(t, []engine.Backend{engine.BackendUring, engine.BackendEpoll}, l.Backend().Name)
		require.NotEmpty(t, l.Backend().Reason)

		in, err := engine.Submit(l, func() (bool, error) { return l.InEventLoop(), nil }).Await(context.Background())
		require.NoError(t, err)
		require.True(t, in, "a task runs on the loop")
		require.Equal(t, engine.Started, l.State())

		require.NoError(t, l.Close())
		require.Equal(t, engine.Terminated, l.State())
		require.ErrorIs(t, l.Execute(tasks.Func(func() {})), engine.ErrShutdown)
	})
}

func TestExecuteKeepsEachProducersOrder(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		l := newLoop(t, c)
		const producers, per = 8, 2000
		last := make([]int, producers) // touched only on the loop
		var bad, done atomic.Int64
		var wg sync.WaitGroup
		for p := range producers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 1; i <= per; i++ {
					require.NoError(t, l.Execute(tasks.Func(func() {
						if last[p] != i-1 {
							bad.Add(1)
						}
						last[p] = i
						done.Add(1)
					})))
				}
			}()
		}
		wg.Wait()
		testenv.Eventually(t, 10*time.Second, "all tasks", func() bool { return done.Load() == producers*per })
		require.Zero(t, bad.Load())
	})
}

// TestNoLostWakeup drives the loop from idle to busy over and over: each
// producer queues a task and waits for it before the next, so the loop goes
// back to sleep between tasks. A lost wake-up leaves a task pending with the
// loop asleep (no timers), and the test times out.
func TestNoLostWakeup(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		l := newLoop(t, c)
		const producers = 8
		per := scale(20000, 1000)
		var worst atomic.Int64
		var wg sync.WaitGroup
		start := l.Metrics().Wakes
		for range producers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ran := make(chan struct{}, 1)
				for i := 0; i < per; i++ {
					queued := time.Now()
					require.NoError(t, l.Execute(tasks.Func(func() {
						d := int64(time.Since(queued))
						for {
							w := worst.Load()
							if d <= w || worst.CompareAndSwap(w, d) {
								break
							}
						}
						ran <- struct{}{}
					})))
					select {
					case <-ran:
					case <-time.After(10 * time.Second):
						t.Errorf("task %d not run after 10s: lost wake-up", i)
						return
					}
				}
			}()
		}
		wg.Wait()
		wakes := l.Metrics().Wakes - start
		t.Logf("%s: %d tasks, worst enqueue-to-run %v, %.1f driver wakes per 1000 Execute",
			c, producers*per, time.Duration(worst.Load()), float64(wakes)*1000/float64(producers*per))
	})
}

// TestWakesAreCoalesced: a burst from many producers into a sleeping loop
// costs far fewer driver wakes than tasks.
func TestWakesAreCoalesced(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		l := newLoop(t, c)
		block := make(chan struct{})
		require.NoError(t, l.Execute(tasks.Func(func() { <-block }))) // keep the loop busy
		start := l.Metrics().Wakes
		var wg sync.WaitGroup
		var done atomic.Int64
		const producers, per = 8, 1000
		for range producers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range per {
					_ = l.Execute(tasks.Func(func() { done.Add(1) }))
				}
			}()
		}
		wg.Wait()
		close(block)
		testenv.Eventually(t, 10*time.Second, "burst", func() bool { return done.Load() == producers*per })
		require.LessOrEqual(t, l.Metrics().Wakes-start, uint64(2), "an awake loop needs no wake-ups")
	})
}

func TestTaskPanicIsReportedAndLoopGoesOn(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		var buf testenv.SyncBuffer
		log := slog.New(slog.NewTextHandler(&buf, nil))
		l := newLoop(t, c, engine.WithLogger(log))
		require.NoError(t, l.Execute(tasks.Func(func() { panic("boom") })))
		v, err := engine.Submit(l, func() (int, error) { return 42, nil }).Await(context.Background())
		require.NoError(t, err)
		require.Equal(t, 42, v)
		require.Contains(t, buf.String(), "boom")
		require.Contains(t, buf.String(), "loop_test.go", "the report carries the stack")
		require.EqualValues(t, 1, l.Metrics().Panics)

		_, err = engine.Submit(l, func() (int, error) { panic("in submit") }).Await(context.Background())
		require.ErrorIs(t, err, tasks.ErrPanicked)
	})
}

func TestAwaitOnOwnLoopIsAnError(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		l := newLoop(t, c)
		got, err := engine.Submit(l, func() (error, error) {
			inner := engine.Submit(l, func() (struct{}, error) { return struct{}{}, nil })
			_, err := inner.Await(context.Background())
			return err, nil
		}).Await(context.Background())
		require.NoError(t, err)
		require.ErrorIs(t, got, tasks.ErrDeadlock)
	})
}

func TestExecuteAfterIterationRunsAfterTasks(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		l := newLoop(t, c)
		var order []string
		done := make(chan struct{})
		require.NoError(t, l.Execute(tasks.Func(func() {
			order = append(order, "task1")
			require.NoError(t, l.ExecuteAfterIteration(tasks.Func(func() { order = append(order, "tail"); close(done) })))
			require.NoError(t, l.Execute(tasks.Func(func() { order = append(order, "task2") })))
		})))
		<-done
		require.Equal(t, []string{"task1", "task2", "tail"}, order)

		// A tail task alone (no normal task) still runs: it wakes the loop.
		tail := make(chan struct{})
		require.NoError(t, l.ExecuteAfterIteration(tasks.Func(func() { close(tail) })))
		select {
		case <-tail:
		case <-time.After(5 * time.Second):
			t.Fatal("tail task did not run")
		}
	})
}

func TestExecuteLazyRunsOnNextWake(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		l := newLoop(t, c)
		_, err := engine.Submit(l, func() (struct{}, error) { return struct{}{}, nil }).Await(context.Background()) // started, now idle
		require.NoError(t, err)
		var ran atomic.Bool
		wakes := l.Metrics().Wakes
		require.NoError(t, l.ExecuteLazy(tasks.Func(func() { ran.Store(true) })))
		require.Equal(t, wakes, l.Metrics().Wakes, "a lazy task never wakes the loop")
		require.NoError(t, l.Execute(tasks.Func(func() {}))) // any wake-up runs it
		testenv.Eventually(t, 5*time.Second, "lazy task", ran.Load)
	})
}

func TestBoundedRingRejects(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		l := newLoop(t, c, engine.WithMaxPendingTasks(16, nil))
		block := busy(t, l)
		var rejected int
		for range 100 {
			if err := l.Execute(tasks.Func(func() {})); err != nil {
				require.ErrorIs(t, err, tasks.ErrRejected)
				rejected++
			}
		}
		close(block)
		require.Equal(t, 100-16, rejected, "the bound is 16")
	})
}

func TestIORatioValidates(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		for _, r := range []int{-1, 0, 101} {
			_, err := engine.New(c.Options(engine.WithIORatio(r))...)
			require.Error(t, err, "ratio %d", r)
		}
		l, err := engine.New(c.Options(engine.WithIORatio(100))...)
		require.NoError(t, err)
		require.NoError(t, l.Close())
	})
}

func TestForcedBackendAndEnv(t *testing.T) {
	var b engine.Backend
	require.Error(t, b.UnmarshalText([]byte("nope")))
	t.Setenv(testenv.BackendEnv, "epoll")
	l, err := engine.New()
	require.NoError(t, err)
	defer l.Close()
	require.Equal(t, engine.BackendEpoll, l.Backend().Name)
	require.Contains(t, l.Backend().Reason, testenv.BackendEnv)
}

func TestPendingTasksFromAnotherGoroutine(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		l := newLoop(t, c)
		block := busy(t, l)
		for range 10 {
			require.NoError(t, l.Execute(tasks.Func(func() {})))
		}
		// Approximate: the consumer publishes its position lazily, so the
		// task now running may still be counted.
		require.Contains(t, []int{10, 11}, l.Metrics().Pending)
		close(block)
		testenv.Eventually(t, 5*time.Second, "drained", func() bool { return l.Metrics().Pending == 0 })
	})
}

func TestNilTasks(t *testing.T) {
	l, err := engine.New(engine.WithBackend(engine.BackendEpoll))
	require.NoError(t, err)
	defer l.Close()
	require.Error(t, l.Execute(nil))
	require.Error(t, l.Execute(tasks.Func(nil)))
	_, err = l.Schedule(nil, time.Second)
	require.Error(t, err)
}

func scale(normal, race int) int { return testenv.Scale(normal, race) }

// busy occupies the loop with a task that runs until the returned channel is
// closed, and returns once that task has started.
func busy(t testing.TB, l *engine.Loop) chan struct{} {
	t.Helper()
	return testenv.Busy(t, l)
}

// TestExecuteStress: 8 producers × 10^6 tasks (10^4 under -race) into a loop
// that is otherwise idle: every task runs exactly once, in each producer's
// order; reports the worst sampled enqueue-to-run delay and the wakes.
func TestExecuteStress(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		l := newLoop(t, c)
		const producers = 8
		per := scale(1_000_000, 10_000)
		if c.Profile != driver.Native {
			per /= 10 // the full size once per backend is enough
		}
		next := make([]int, producers) // loop-only
		var bad, ran, worst atomic.Int64
		start := l.Metrics().Wakes
		var wg sync.WaitGroup
		for p := range producers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range per {
					var queued time.Time
					if i%1024 == 0 {
						queued = time.Now()
					}
					require.NoError(t, l.Execute(tasks.Func(func() {
						if next[p] != i {
							bad.Add(1)
						}
						next[p] = i + 1
						ran.Add(1)
						if !queued.IsZero() {
							if d := int64(time.Since(queued)); d > worst.Load() {
								worst.Store(d)
							}
						}
					})))
				}
			}()
		}
		wg.Wait()
		testenv.Eventually(t, 60*time.Second, "all tasks", func() bool { return ran.Load() == int64(producers*per) })
		require.Zero(t, bad.Load(), "a producer's tasks ran out of order, twice or not at all")
		wakes := l.Metrics().Wakes - start
		t.Logf("%s: %d tasks, worst sampled enqueue-to-run %v, %.2f driver wakes per 1000 Execute",
			c, producers*per, time.Duration(worst.Load()), float64(wakes)*1000/float64(producers*per))
	})
}

func discardLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// TestStallDetectorReportsLongTasks: the watchdog reports a task that
// blocks its loop past the threshold while it is still blocked, once, with
// how long so far, the loop, and the blocking function from the loop's
// stack; the user's function gets the report instead of the log. The
// engine's clock is a fake one that only the test moves, so the report
// cannot come from the machine being slow: the test moves the clock while
// the task is blocked until the watchdog reports.
func TestStallDetectorReportsLongTasks(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		clock, restore := engine.UseFakeClock()
		defer restore() // before the loop's Close, which runs on the real clock
		reports := make(chan engine.StallReport, 4)
		// No spin: on the fake clock an idle gap never grows.
		l := newLoop(t, c, engine.WithSpin(0, false),
			engine.WithStallDetector(5*time.Millisecond, func(r engine.StallReport) { reports <- r }))
		_, err := engine.Submit(l, func() (struct{}, error) { return struct{}{}, nil }).Await(context.Background())
		require.NoError(t, err)
		release, started := make(chan struct{}), make(chan struct{})
		require.NoError(t, l.Execute(tasks.Func(func() { close(started); blockedOn(release) })))
		<-started
		var r engine.StallReport
		testenv.Eventually(t, 30*time.Second, "the stall reported", func() bool {
			select {
			case r = <-reports:
				return true
			default:
				clock.Add(int64(time.Millisecond))
				return false
			}
		})
		close(release)
		require.Equal(t, "task", r.What)
		require.GreaterOrEqual(t, r.Took, 5*time.Millisecond)
		require.Same(t, l, r.Loop)
		require.Contains(t, r.Detail, "engine_test.blockedOn")
		require.Contains(t, r.Detail, "loop_test.go:")
		require.NotEmpty(t, r.Stack)
		_, err = engine.Submit(l, func() (struct{}, error) { return struct{}{}, nil }).Await(context.Background())
		require.NoError(t, err)
		clock.Add(int64(time.Second)) // a loop between pieces is not blocked
		_, err = engine.Submit(l, func() (struct{}, error) { return struct{}{}, nil }).Await(context.Background())
		require.NoError(t, err)
		require.Empty(t, reports, "one stall, one report")
	})
}

func blockedOn(ch chan struct{}) { <-ch }

// TestStallDetectorDozesWhenIdle: once every loop has been idle for a whole
// tick the watchdog stops ticking (an idle server is not woken 16 times a
// second by its own watchdog), and a task that then blocks its loop wakes
// it: the stall is still reported.
func TestStallDetectorDozesWhenIdle(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		reports := make(chan engine.StallReport, 4)
		l := newLoop(t, c, engine.WithStallDetector(20*time.Millisecond, func(r engine.StallReport) { reports <- r }))
		ln, err := engine.Listen(l, "tcp", "127.0.0.1:0", closeRecorder{opened: make(chan *engine.Conn, 1), closed: make(chan error, 1)})
		require.NoError(t, err)
		defer ln.Close()
		testenv.Eventually(t, 30*time.Second, "the watchdog dozes", engine.WatchdogDozing)
		release := make(chan struct{})
		defer close(release) // before the loop's Close
		require.NoError(t, l.Execute(tasks.Func(func() { blockedOn(release) })))
		var r engine.StallReport
		select {
		case r = <-reports:
		case <-time.After(30 * time.Second):
			t.Fatal("a task blocked the loop after the watchdog dozed: no report")
		}
		require.Equal(t, "task", r.What)
		require.Contains(t, r.Detail, "engine_test.blockedOn")
	})
}

// TestBusyPoll: within the window after work the loop polls instead of
// sleeping, so a new task needs no driver wake-up; after it, the loop sleeps.
// The window is checked on a fake clock: while it stands still the loop must
// poll without ever blocking; once it passes the window, the loop must block
// in the driver, and then a task needs a wake-up again.
func TestBusyPoll(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		l := newLoop(t, c, engine.WithSpin(time.Hour, true))
		_, err := engine.Submit(l, func() (struct{}, error) { return struct{}{}, nil }).Await(context.Background())
		require.NoError(t, err)
		wakes := l.Metrics().Wakes
		for range 100 {
			_, err := engine.Submit(l, func() (struct{}, error) { return struct{}{}, nil }).Await(context.Background())
			require.NoError(t, err)
		}
		require.Equal(t, wakes, l.Metrics().Wakes, "a busy-polling loop needed wake-ups")

		clock, restore := engine.UseFakeClock()
		defer restore()
		const window = 20 * time.Millisecond
		w := &waitRecorder{}
		l2 := newLoop(t, c, engine.WithSpin(window, true),
			engine.WithDriverWrapper(func(d driver.Driver) driver.Driver { w.Driver = d; return w }))
		_, err = engine.Submit(l2, func() (struct{}, error) { return struct{}{}, nil }).Await(context.Background())
		require.NoError(t, err)
		blocking, it := w.blocking.Load(), l2.Metrics().Iterations
		testenv.Eventually(t, 30*time.Second, "1000 polls within the window", func() bool {
			return l2.Metrics().Iterations-it >= 1000
		})
		require.Equal(t, blocking, w.blocking.Load(), "the loop slept within its busy-poll window")
		clock.Add(int64(window)) // past the window: the loop goes to sleep
		testenv.Eventually(t, 30*time.Second, "a blocking wait past the window", func() bool {
			return w.blocking.Load() > blocking
		})
		wakes = l2.Metrics().Wakes
		_, err = engine.Submit(l2, func() (struct{}, error) { return struct{}{}, nil }).Await(context.Background())
		require.NoError(t, err)
		require.Greater(t, l2.Metrics().Wakes, wakes, "a task for a loop asleep past its window needs a wake-up")
	})
	_, err := engine.New(engine.WithSpin(-1, true))
	require.Error(t, err)
}
