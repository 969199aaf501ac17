package engine_test

import (
	"context"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/internal/driver"
	"github.com/ringloop/ringloop/internal/testenv"
	"github.com/ringloop/ringloop/internal/timers"
	"github.com/ringloop/ringloop/tasks"
)

// TestTimersFireInOrderNeverEarly: timers scheduled from outside the loop
// fire in the order of their deadlines (ties in scheduling order), none
// before its deadline. Each deadline is taken when its Schedule call
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
			s, err := l.Schedule(tasks.Func(func() {
				defer wg.Done()
				mu.Lock()
				defer mu.Unlock()
				if now := timers.Now(); now < deadlines[i] {
					t.Errorf("timer %d fired %v before its deadline", i, time.Duration(deadlines[i]-now))
				}
				got = append(got, i)
			}), d*time.Millisecond)
			require.NoError(t, err)
			deadlines[i] = s.(*timers.Scheduled).Deadline()
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
// it: the driver is asked to wait exactly the time left to the timer's
// deadline (the loop computes the timeout from it), never longer, after at
// most a few non-blocking polls, and the timer never fires early. The loop and
// its timers run on a fake clock that moves only when the test moves it, so
// the timeout asked for is exact and no count depends on the machine's speed.
func TestWaitTimeoutIsTheNextDeadline(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		clock, restore := engine.UseFakeClock()
		defer restore() // before the loop's Close, which runs on the real clock
		w := &waitRecorder{}
		// No spin: on the fake clock an idle gap never grows, so a locked
		// loop would spin until the clock moves.
		l := newLoop(t, c, engine.WithSpin(0, false),
			engine.WithDriverWrapper(func(d driver.Driver) driver.Driver { w.Driver = d; return w }))
		l.UseFakeTimers(clock)
		_, err := engine.Submit(l, func() (struct{}, error) { return struct{}{}, nil }).Await(context.Background())
		require.NoError(t, err)
		const d = 100 * time.Millisecond
		fired := make(chan int64, 1)
		polls := w.polls.Load()
		w.longest.Store(0)
		s, err := l.Schedule(tasks.Func(func() { fired <- clock.Load() }), d)
		require.NoError(t, err)
		deadline := s.(*timers.Scheduled).Deadline()
		require.Equal(t, clock.Load()+int64(d), deadline)
		// The clock stands still: the loop must come to ask for exactly d.
		testenv.Eventually(t, 30*time.Second, "a wait of the time left to the deadline", func() bool {
			return w.longest.Load() == int64(d)
		})
		select {
		case at := <-fired:
			t.Fatalf("the timer fired at %d, before its deadline %d", at, deadline)
		default:
		}
		clock.Add(int64(d))
		select {
		case at := <-fired:
			require.GreaterOrEqual(t, at, deadline, "the timer fired early")
		case <-time.After(30 * time.Second):
			t.Fatal("the timer did not fire once its deadline passed")
		}
		require.LessOrEqual(t, w.longest.Load(), int64(d), "the loop asked to sleep past the deadline")
		// Polls: the iteration that took the timer in, and the one that ran
		// it; spinning towards the deadline would make them countless.
		n := w.polls.Load() - polls
		require.LessOrEqual(t, n, int64(6), "the loop polled instead of sleeping until the deadline")
		t.Logf("%s: %d non-blocking polls, %d blocking waits", c, n, w.blocking.Load())
	})
}

// waitRecorder wraps a driver and records the longest finite timeout the
// loop asked it to wait (WaitForever is not finite), and counts the
// non-blocking polls and the blocking waits.
type waitRecorder struct {
	driver.Driver
	longest         atomic.Int64
	polls, blocking atomic.Int64
}

func (w *waitRecorder) Wait(timeout time.Duration, fn func(*driver.Completion)) (int, error) {
	if int64(timeout) > w.longest.Load() {
		w.longest.Store(int64(timeout))
	}
	if timeout == driver.NoWait {
		w.polls.Add(1)
	} else {
		w.blocking.Add(1)
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

// TestFixedRateCatchesUp: a fixed-rate task that stalls for five periods is
// run again at once for each period it missed, then keeps its rate, never
// ahead of it. On a fake clock (the loop's and its timers') the stall is the
// task moving the clock, and "at once" means without the clock moving again.
func TestFixedRateCatchesUp(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		clock, restore := engine.UseFakeClock()
		defer restore()
		l := newLoop(t, c, engine.WithSpin(0, false))
		l.UseFakeTimers(clock)
		const period = 20 * time.Millisecond
		var runs []int64 // clock readings, touched on the loop
		caught, done := make(chan struct{}), make(chan struct{})
		start := clock.Load()
		_, err := l.ScheduleAtFixedRate(tasks.Func(func() {
			if len(runs) == 7 {
				return
			}
			runs = append(runs, clock.Load())
			switch len(runs) {
			case 1:
				clock.Add(int64(5 * period)) // a stall: runs 2..6 fall due
			case 6:
				close(caught)
			case 7:
				close(done)
			}
		}), period, period)
		require.NoError(t, err)
		clock.Add(int64(period)) // the first run falls due
		select {
		case <-caught:
		case <-time.After(30 * time.Second):
			t.Fatal("fixed rate did not catch up: the runs missed in a stall wait for the clock")
		}
		// The seventh run is due a period after the stall's end: not yet.
		var n int
		_, err = engine.Submit(l, func() (struct{}, error) { n = len(runs); return struct{}{}, nil }).Await(context.Background())
		require.NoError(t, err)
		require.Equal(t, 6, n, "a run came before its time")
		clock.Add(int64(period))
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Fatal("the rate did not go on after catching up")
		}
		for i, r := range runs[1:6] {
			require.Equal(t, start+int64(6*period), r, "run %d waited for the clock after the stall", i+2)
		}
		for i, r := range runs { // run i is due at start + (i+1) periods, never earlier
			require.GreaterOrEqual(t, r, start+int64(i+1)*int64(period), "run %d ran ahead of its rate", i)
		}
	})
}

func TestFixedDelaySpacing(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		l := newLoop(t, c)
		const delay = 15 * time.Millisecond
		var ends, starts []time.Time
		done := make(chan struct{})
		s, err := l.ScheduleWithFixedDelay(tasks.Func(func() {
			if len(starts) == 4 {
				return // the test reads starts and ends now
			}
			starts = append(starts, time.Now())
			time.Sleep(10 * time.Millisecond)
			ends = append(ends, time.Now())
			if len(starts) == 4 {
				close(done)
			}
		}), 0, delay)
		require.NoError(t, err)
		<-done
		require.True(t, s.Cancel())
		for i := 1; i < 4; i++ {
			require.GreaterOrEqual(t, starts[i].Sub(ends[i-1]), delay, "run %d started before the delay after the previous end", i)
		}
	})
}

// TestCancelTimerFromAnotherGoroutine: Cancel from another goroutine wins
// over a timer that has not started, even one already due. Half the timers
// are cancelled while the loop is held inside a task past their deadline
// (timers run on the loop, so none can start): each of them that had not run
// before the hold must be cancelled, and must never run once the loop is
// let go. The other half are cancelled as the loop is let go and runs them,
// racing it: whatever Cancel returns holds (true: never ran; false: ran
// once). A last timer, due after all of them, tells when each uncancelled
// one must have run.
func TestCancelTimerFromAnotherGoroutine(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		l := newLoop(t, c)
		const n, delay = 100, 200 * time.Millisecond
		var ran [n]atomic.Int32
		keep := make([]interface{ Cancel() bool }, n)
		due := time.Now().Add(delay)
		for i := range n {
			s, err := l.Schedule(tasks.Func(func() { ran[i].Add(1) }), delay)
			require.NoError(t, err)
			keep[i] = s
		}
		// The timers' scheduling tasks are queued before this one: when it
		// runs, every timer is in the loop's heap.
		var before [n]int32
		held, release := make(chan struct{}), make(chan struct{})
		require.NoError(t, l.Execute(tasks.Func(func() {
			for i := range n {
				before[i] = ran[i].Load()
			}
			close(held)
			<-release
		})))
		<-held
		<-time.After(time.Until(due)) // every timer is due, none can run

		var cancelled [n]bool
		held0 := 0
		for i := 0; i < n; i += 2 {
			cancelled[i] = keep[i].Cancel()
			if before[i] == 0 {
				require.True(t, cancelled[i], "timer %d: Cancel returned false while the loop was held before running it", i)
				held0++
			}
		}
		// A loop 200 ms late to its own tasks would leave nothing to check.
		require.Positive(t, held0, "every timer ran before the loop was held")
		close(release)
		for i := n - 1; i > 0; i -= 2 { // racing the loop, latest deadline first
			cancelled[i] = keep[i].Cancel()
		}
		fired := make(chan struct{})
		_, err := l.Schedule(tasks.Func(func() { close(fired) }), 0) // queued after all of them, due now
		require.NoError(t, err)
		<-fired
		raced := 0
		for i := range n {
			if cancelled[i] {
				require.Zero(t, ran[i].Load(), "timer %d ran although Cancel returned true", i)
				if i%2 == 1 {
					raced++
				}
			} else {
				require.EqualValues(t, 1, ran[i].Load(), "timer %d: Cancel returned false, yet it did not run once", i)
			}
		}
		t.Logf("%s: %d of %d cancelled while held, %d of %d won the race", c, held0, n/2, raced, n/2)
	})
}

func TestPeriodicPanicStopsAndFails(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		l := newLoop(t, c, engine.WithLogger(discardLogger()))
		var n atomic.Int32
		s, err := l.ScheduleAtFixedRate(tasks.Func(func() {
			if n.Add(1) == 3 {
				panic("third run")
			}
		}), 0, 5*time.Millisecond)
		require.NoError(t, err)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_, err = s.Await(ctx)
		require.Error(t, err)
		require.NotErrorIs(t, err, context.DeadlineExceeded)
		require.EqualValues(t, 3, n.Load())
	})
}
