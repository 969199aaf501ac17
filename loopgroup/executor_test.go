package loopgroup_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/internal/testenv"
	"github.com/ringloop/ringloop/loopgroup"
	"github.com/ringloop/ringloop/tasks"
)

// onWhich returns the index of the group loop the caller runs on, or -1.
func onWhich(g *loopgroup.Group) int {
	for i, l := range g.Loops() {
		if l.InEventLoop() {
			return i
		}
	}
	return -1
}

// TestGroupExecutorDelegates: Execute, Submit and the Schedule family each
// run on Next(), in turn.
func TestGroupExecutorDelegates(t *testing.T) {
	testenv.ForEachBackend(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		g := newGroup(t, c, loopgroup.WithLoops(2))
		where := make(chan int, 16)
		report := func() { where <- onWhich(g) }
		require.NoError(t, g.Execute(tasks.Func(report)))
		require.NoError(t, g.Execute(tasks.Func(report)))
		_, err := engine.Submit(g, func() (struct{}, error) { report(); return struct{}{}, nil }).Await(context.Background())
		require.NoError(t, err)
		v, err := engine.Submit(g, func() (int, error) { return onWhich(g), nil }).Await(context.Background())
		require.NoError(t, err)
		where <- v
		s1, err := g.Schedule(tasks.Func(report), time.Millisecond)
		require.NoError(t, err)
		s2, err := g.Schedule(tasks.Func(report), 0)
		require.NoError(t, err)
		var runs atomic.Int32
		stopAfter3 := func() { where <- onWhich(g) }
		fr, err := g.ScheduleAtFixedRate(tasks.Func(func() {
			if runs.Add(1) <= 3 {
				stopAfter3()
			}
		}), 0, time.Millisecond)
		require.NoError(t, err)
		var runs2 atomic.Int32
		fd, err := g.ScheduleWithFixedDelay(tasks.Func(func() {
			if runs2.Add(1) <= 3 {
				stopAfter3()
			}
		}), 0, time.Millisecond)
		require.NoError(t, err)
		got := map[int]int{}
		for range 6 + 6 {
			got[<-where]++
		}
		fr.Cancel()
		fd.Cancel()
		_, _ = s1.Await(context.Background())
		_, _ = s2.Await(context.Background())
		// Six one-shot calls alternate loops 0,1,...; each periodic task stays
		// on its loop (the 7th and 8th Next: 0 and 1).
		assert.Equal(t, map[int]int{0: 6, 1: 6}, got)
		_, err = g.ScheduleAtFixedRate(tasks.Func(func() {}), 0, 0)
		assert.Error(t, err)
	})
}

// TestGroupSchedulePeriodic: the periodic schedules of plain functions run
// on the next loop, every run on that one loop, until cancelled; a nil
// function is refused.
func TestGroupSchedulePeriodic(t *testing.T) {
	testenv.ForEachBackend(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		g := newGroup(t, c, loopgroup.WithLoops(2))
		rate, delay := make(chan int, 8), make(chan int, 8)
		var nRate, nDelay atomic.Int32
		fr, err := g.ScheduleAtFixedRate(tasks.Func(func() {
			if nRate.Add(1) <= 3 {
				rate <- onWhich(g)
			}
		}), 0, time.Millisecond)
		require.NoError(t, err)
		fd, err := g.ScheduleWithFixedDelay(tasks.Func(func() {
			if nDelay.Add(1) <= 3 {
				delay <- onWhich(g)
			}
		}), 0, time.Millisecond)
		require.NoError(t, err)
		for range 3 {
			assert.Equal(t, 0, <-rate, "the fixed-rate function stays on the loop Next gave")
			assert.Equal(t, 1, <-delay, "the fixed-delay function stays on the loop Next gave")
		}
		fr.Cancel()
		fd.Cancel()
		_, err = g.ScheduleAtFixedRate(tasks.Func(nil), 0, time.Millisecond)
		assert.Error(t, err)
		_, err = g.ScheduleWithFixedDelay(tasks.Func(nil), 0, time.Millisecond)
		assert.Error(t, err)
	})
}

// TestCrossLoopExecute: a task on loop A submits to loop B and waits for its
// future, a hundred times; then the other way round. (Both at once would be
// a real deadlock: each loop blocked waiting for the other.) Awaiting a
// future of one's own loop is refused instead of hanging.
func TestCrossLoopExecute(t *testing.T) {
	testenv.ForEachBackend(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		g := newGroup(t, c, loopgroup.WithLoops(2))
		a, b := g.Loops()[0], g.Loops()[1]
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		hop := func(from, to *engine.Loop, n int) tasks.Future[int] {
			return engine.Submit(from, func() (int, error) {
				sum := 0
				for i := range n {
					v, err := engine.Submit(to, func() (int, error) {
						if !to.InEventLoop() {
							return 0, errors.New("not on the target loop")
						}
						return i, nil
					}).Await(ctx)
					if err != nil {
						return 0, err
					}
					sum += v
				}
				return sum, nil
			})
		}
		v1, err := hop(a, b, 100).Await(ctx)
		require.NoError(t, err)
		v2, err := hop(b, a, 100).Await(ctx)
		require.NoError(t, err)
		assert.Equal(t, 4950, v1)
		assert.Equal(t, 4950, v2)

		_, err = engine.Submit(a, func() (int, error) {
			return engine.Submit(a, func() (int, error) { return 1, nil }).Await(ctx)
		}).Await(ctx)
		assert.ErrorIs(t, err, tasks.ErrDeadlock)
	})
}

// TestInvokeAllAny: both run every function on one loop; InvokeAny returns
// the first success and cancels the rest; both refuse a caller on a loop of
// the group.
func TestInvokeAllAny(t *testing.T) {
	testenv.ForEachBackend(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		g := newGroup(t, c, loopgroup.WithLoops(3))
		ctx := context.Background()
		var fns []func() (int, error)
		for i := range 5 {
			fns = append(fns, func() (int, error) {
				if i == 3 {
					return 0, errors.New("three")
				}
				return 10*i + onWhich(g), nil
			})
		}
		fs, err := loopgroup.InvokeAll(ctx, g, fns)
		require.NoError(t, err)
		require.Len(t, fs, 5)
		first, _, _ := fs[0].Poll()
		loop := first % 10
		for i, f := range fs {
			v, done, err := f.Poll()
			require.True(t, done)
			if i == 3 {
				assert.EqualError(t, err, "three")
				continue
			}
			assert.Equal(t, 10*i+loop, v, "all on one loop")
		}

		anyFns := []func() (string, error){
			func() (string, error) { return "", errors.New("first fails") },
			func() (string, error) { return "second", nil },
			func() (string, error) { return "third", nil },
		}
		v, err := loopgroup.InvokeAny(ctx, g, anyFns)
		require.NoError(t, err)
		assert.Equal(t, "second", v)

		_, err = loopgroup.InvokeAny(ctx, g, []func() (int, error){
			func() (int, error) { return 0, errors.New("a") },
			func() (int, error) { return 0, errors.New("b") },
		})
		assert.EqualError(t, err, "b", "all fail: the last error")
		_, err = loopgroup.InvokeAny[int](ctx, g, nil)
		assert.ErrorIs(t, err, loopgroup.ErrNoTasks)

		_, err = engine.Submit(g, func() (int, error) {
			_, err := loopgroup.InvokeAll(ctx, g, fns)
			return 0, err
		}).Await(ctx)
		assert.ErrorIs(t, err, loopgroup.ErrCalledFromLoop)
		_, err = engine.Submit(g, func() (int, error) {
			return loopgroup.InvokeAny(ctx, g, fns)
		}).Await(ctx)
		assert.ErrorIs(t, err, loopgroup.ErrCalledFromLoop)
		_, err = engine.Submit(g, func() (int, error) { return 0, g.Close() }).Await(ctx)
		assert.ErrorIs(t, err, loopgroup.ErrCalledFromLoop)
	})
}

// TestInvokeAllContext: when ctx ends first the unstarted tasks are
// cancelled and never run.
func TestInvokeAllContext(t *testing.T) {
	testenv.ForEachBackend(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		g := newGroup(t, c, loopgroup.WithLoops(1))
		release := make(chan struct{})
		var ran atomic.Int32
		fns := []func() (int, error){
			func() (int, error) { <-release; return 1, nil },
			func() (int, error) { ran.Add(1); return 2, nil },
		}
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		fs, err := loopgroup.InvokeAll(ctx, g, fns)
		assert.ErrorIs(t, err, context.DeadlineExceeded)
		close(release)
		require.Len(t, fs, 2)
		assert.True(t, fs[1].IsCancelled())
		_, err = engine.Submit(g, func() (struct{}, error) { return struct{}{}, nil }).Await(context.Background())
		require.NoError(t, err)
		assert.Zero(t, ran.Load(), "the cancelled task never ran")
	})
}
