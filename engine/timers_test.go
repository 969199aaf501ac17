package engine_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/internal/testenv"
)

func TestTimersFireInOrderNeverEarly(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		l := newLoop(t, c)
		var mu sync.Mutex
		var got []int
		start := time.Now()
		delays := []time.Duration{30, 10, 20, 10, 0, 40}
		var wg sync.WaitGroup
		for i, d := range delays {
			wg.Add(1)
			d := d * time.Millisecond
			_, err := l.ScheduleFunc(func() {
				defer wg.Done()
				if el := time.Since(start); el < d {
					t.Errorf("timer %d fired after %v, before its %v delay", i, el, d)
				}
				mu.Lock()
				got = append(got, i)
				mu.Unlock()
			}, d)
			require.NoError(t, err)
		}
		wg.Wait()
		require.Equal(t, []int{4, 1, 3, 2, 0, 5}, got, "deadline order, ties in scheduling order")
	})
}

// TestWaitTimeoutIsTheNextDeadline: an idle loop with one timer sleeps until
// it, in very few iterations, and the timer fires close to its deadline.
func TestWaitTimeoutIsTheNextDeadline(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		l := newLoop(t, c)
		_, err := l.Submit(func() error { return nil }).Await(context.Background())
		require.NoError(t, err)
		before := l.Metrics().Iterations
		const d = 100 * time.Millisecond
		fired := make(chan time.Duration, 1)
		start := time.Now()
		_, err = l.ScheduleFunc(func() { fired <- time.Since(start) }, d)
		require.NoError(t, err)
		took := <-fired
		iters := l.Metrics().Iterations - before
		require.GreaterOrEqual(t, took, d)
		require.Less(t, took, d+100*time.Millisecond, "fired late")
		require.LessOrEqual(t, iters, uint64(6), "the loop spun instead of sleeping until the deadline")
		t.Logf("%s: fired after %v in %d iterations", c, took, iters)
	})
}

func TestFixedRateCatchesUp(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		l := newLoop(t, c)
		const period = 20 * time.Millisecond
		var runs []time.Time
		done := make(chan struct{})
		start := time.Now()
		_, err := l.ScheduleFuncAtFixedRate(func() {
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

func TestCancelTimerFromAnotherGoroutine(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		l := newLoop(t, c)
		var ran atomic.Int32
		var keep []interface{ Cancel() bool }
		for range 100 {
			s, err := l.ScheduleFunc(func() { ran.Add(1) }, 50*time.Millisecond)
			require.NoError(t, err)
			keep = append(keep, s)
		}
		for _, s := range keep {
			require.True(t, s.Cancel())
		}
		fired := make(chan struct{})
		_, err := l.ScheduleFunc(func() { close(fired) }, 80*time.Millisecond)
		require.NoError(t, err)
		<-fired
		require.Zero(t, ran.Load(), "a cancelled timer ran")
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
