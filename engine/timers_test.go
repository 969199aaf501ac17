package engine_test

import (
	"context"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ringloop/ringloop/driver"
	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/internal/testenv"
	"github.com/ringloop/ringloop/timers"
)

// TestTimersFireInOrderNeverEarly: timers scheduled from outside the loop
// fire in the order of their deadlines (ties in scheduling order), none
// before its deadline. Each deadline is taken when its ScheduleFunc call
// runs, so the expected order comes from the deadlines actually scheduled:
// on a slow machine (emulation) a 30 ms timer scheduled 15 ms before a 20 ms
// one is due first. The loop is held in a task meanwhile, so it takes every
// timer in before any is due: a timer still on its way through the task ring
// when an earlier-scheduled one falls due cannot be ordered before it.
func TestTimersFireInOrderNeverEarly(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		l := newLoop(t, c)
		block := busy(t, l)
		var mu sync.Mutex
		var got []int
		delays := []time.Duration{30, 10, 20, 10, 0, 40}
		deadlines := make([]int64, len(delays))
		var wg sync.WaitGroup
		for i, d := range delays {
			wg.Add(1)
			mu.Lock() // the timer must not read deadlines[i] before it is set
			s, err := l.ScheduleFunc(func() {
				defer wg.Done()
				mu.Lock()
				defer mu.Unlock()
				if now := timers.Now(); now < deadlines[i] {
					t.Errorf("timer %d fired %v before its deadline", i, time.Duration(deadlines[i]-now))
				}
				got = append(got, i)
			}, d*time.Millisecond)
			require.NoError(t, err)
			deadlines[i] = s.Deadline()
			mu.Unlock()
		}
		close(block)
		wg.Wait()
		want := []int{0, 1, 2, 3, 4, 5}
		sort.SliceStable(want, func(a, b int) bool { return deadlines[want[a]] < deadlines[want[b]] })
		require.Equal(t, want, got, "deadline order, ties in scheduling order (deadlines %v)", deadlines)
	})
}

// TestWaitTimeoutIsTheNextDeadline: an idle loop with one timer sleeps until
// it: the driver is asked to wait no longer than the timer's delay (the loop
// computes the timeout from the deadline), in very few iterations, and the
// timer never fires early.
func TestWaitTimeoutIsTheNextDeadline(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		w := &waitRecorder{}
		l := newLoop(t, c, engine.WithDriverWrapper(func(d driver.Driver) driver.Driver { w.Driver = d; return w }))
		_, err := l.Submit(func() error { return nil }).Await(context.Background())
		require.NoError(t, err)
		m0 := l.Metrics()
		const d = 100 * time.Millisecond
		fired := make(chan time.Duration, 1)
		w.longest.Store(0)
		start := time.Now()
		_, err = l.ScheduleFunc(func() { fired <- time.Since(start) }, d)
		require.NoError(t, err)
		took := <-fired
		m := l.Metrics()
		// A locked loop may spin for a moment after the task that scheduled
		// the timer (WithAdaptiveSpin); what it must not do is poll on until
		// the deadline: few iterations besides those polls.
		iters := m.Iterations - m0.Iterations - (m.Spins - m0.Spins)
		require.GreaterOrEqual(t, took, d)
		require.LessOrEqual(t, w.longest.Load(), int64(d), "the loop asked to sleep past the deadline")
		require.Greater(t, w.longest.Load(), int64(d/2), "the loop never asked to sleep towards the deadline")
		require.LessOrEqual(t, iters, uint64(6), "the loop spun instead of sleeping until the deadline")
		t.Logf("%s: fired after %v in %d iterations", c, took, iters)
	})
}

// waitRecorder wraps a driver and records the longest finite timeout the
// loop asked it to wait (WaitForever is not finite).
type waitRecorder struct {
	driver.Driver
	longest atomic.Int64
}

func (w *waitRecorder) Wait(timeout time.Duration, fn func(*driver.Completion)) (int, error) {
	if int64(timeout) > w.longest.Load() {
		w.longest.Store(int64(timeout))
	}
	return w.Driver.Wait(timeout, fn)
}

// Enable forwards the io_uring driver's thread binding.
func (w *waitRecorder) Enable() error {
	if e, ok := w.Driver.(driver.Starter); ok {
		return e.Enable()
	}
	return nil
}

func TestFixedRateCatchesUp(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		l := newLoop(t, c)
		const period = 20 * time.Millisecond
		var runs []time.Time
		done := make(chan struct{})
		start := time.Now()
		_, err := l.ScheduleFuncAtFixedRate(func() {
			if len(runs) == 8 {
				return // the test reads runs now
			}
			runs = append(runs, time.Now())
			if len(runs) == 1 {
				time.Sleep(5 * period) // a stall: the next runs come back to back
			}
			if len(runs) == 8 {
				close(done)
			}
		}, period, period)
		require.NoError(t, err)
		<-done
		// After the stall, runs 2..6 were already due: they run immediately.
		require.Less(t, runs[2].Sub(runs[1]), period/2, "fixed rate did not catch up")
		for i, r := range runs { // run i is due at start + (i+1) periods, never earlier
			require.GreaterOrEqual(t, r.Sub(start), time.Duration(i+1)*period, "run %d ran ahead of its rate", i)
		}
	})
}

func TestFixedDelaySpacing(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		l := newLoop(t, c)
		const delay = 15 * time.Millisecond
		var ends, starts []time.Time
		done := make(chan struct{})
		s, err := l.ScheduleFuncWithFixedDelay(func() {
			if len(starts) == 4 {
				return // the test reads starts and ends now
			}
			starts = append(starts, time.Now())
			time.Sleep(10 * time.Millisecond)
			ends = append(ends, time.Now())
			if len(starts) == 4 {
				close(done)
			}
		}, 0, delay)
		require.NoError(t, err)
		<-done
		require.True(t, s.Cancel())
		for i := 1; i < 4; i++ {
			require.GreaterOrEqual(t, starts[i].Sub(ends[i-1]), delay, "run %d started before the delay after the previous end", i)
		}
	})
}

// TestCancelTimerFromAnotherGoroutine: a timer whose Cancel (from another
// goroutine) returned true never runs; one whose Cancel returned false had
// already run (on a loaded machine some may fall due before the test gets to
// cancel them). A last timer, due after all of them, tells when each
// uncancelled one must have run.
func TestCancelTimerFromAnotherGoroutine(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		l := newLoop(t, c)
		const n, delay = 100, 200 * time.Millisecond
		var ran [n]atomic.Int32
		keep := make([]interface{ Cancel() bool }, n)
		for i := range n {
			s, err := l.ScheduleFunc(func() { ran[i].Add(1) }, delay)
			require.NoError(t, err)
			keep[i] = s
		}
		var cancelled [n]bool
		for i := n - 1; i >= 0; i-- { // latest deadline first
			cancelled[i] = keep[i].Cancel()
		}
		fired := make(chan struct{})
		_, err := l.ScheduleFunc(func() { close(fired) }, delay) // scheduled last: due last
		require.NoError(t, err)
		<-fired
		count := 0
		for i := range n {
			if cancelled[i] {
				count++
				require.Zero(t, ran[i].Load(), "timer %d ran although Cancel returned true", i)
			} else {
				require.EqualValues(t, 1, ran[i].Load(), "timer %d: Cancel returned false, yet it did not run once", i)
			}
		}
		t.Logf("%s: %d of %d cancelled in time", c, count, n)
	})
}

func TestPeriodicPanicStopsAndFails(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		l := newLoop(t, c, engine.WithLogger(discardLogger()))
		var n atomic.Int32
		s, err := l.ScheduleFuncAtFixedRate(func() {
			if n.Add(1) == 3 {
				panic("third run")
			}
		}, 0, 5*time.Millisecond)
		require.NoError(t, err)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_, err = s.Await(ctx)
		require.Error(t, err)
		require.NotErrorIs(t, err, context.DeadlineExceeded)
		require.EqualValues(t, 3, n.Load())
	})
}
