package loopgroup_test

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/internal/testenv"
	"github.com/ringloop/ringloop/loopgroup"
	"github.com/ringloop/ringloop/tasks"
)

func TestNewDefaultsAndAccessors(t *testing.T) {
	testenv.ForEachBackend(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		g := newGroup(t, c, loopgroup.WithName("io"))
		want := runtime.GOMAXPROCS(0)
		if g.Loops()[0].Backend().Threading == engine.ThreadingLocked {
			want = max(1, want-1) // locked loops leave a P for the scheduler
		}
		require.Len(t, g.Loops(), want)
		loops := g.Loops()
		loops[0] = nil // a copy: the group is unaffected
		for i, l := range g.Loops() {
			assert.NotNil(t, l)
			assert.Equal(t, 0, g.Connections(l))
			assert.Equal(t, fmt.Sprintf("io-%d", i), l.Name())
			assert.Equal(t, engine.NotStarted, l.State(), "loops start lazily")
		}
		other, err := engine.New(c.Options()...)
		require.NoError(t, err)
		defer other.Close()
		assert.Equal(t, 0, g.Connections(other))
		assert.False(t, g.InEventLoop())
	})
}

func TestNewOptions(t *testing.T) {
	testenv.ForEachBackend(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		g := newGroup(t, c, loopgroup.WithLoops(3), loopgroup.WithEngineOptions(engine.WithIORatio(70)),
			loopgroup.WithEngineOptions(engine.WithMaxPendingTasks(16, tasks.Reject())))
		require.Equal(t, 3, len(g.Loops()))
		for _, l := range g.Loops() {
			assert.Equal(t, c.Backend, l.Backend().Name)
		}
		// The bounded ring refuses once full: block the loop, fill it.
		l := g.Loops()[0]
		release := make(chan struct{})
		started := make(chan struct{})
		require.NoError(t, l.Execute(tasks.Func(func() { close(started); <-release })))
		<-started
		var rejected error
		for range 64 {
			if err := l.Execute(tasks.Func(func() {})); err != nil {
				rejected = err
				break
			}
		}
		close(release)
		assert.ErrorIs(t, rejected, tasks.ErrRejected)

		for _, bad := range []loopgroup.Option{
			loopgroup.WithLoops(-1), loopgroup.WithEngineOptions(engine.WithIORatio(0)), loopgroup.WithEngineOptions(engine.WithMaxPendingTasks(-1, nil)),
			loopgroup.WithChooser(nil), loopgroup.WithThreads(loopgroup.Threads{CPUs: []int{-1}}),
		} {
			_, err := loopgroup.New(loopgroup.WithEngineOptions(c.Options()...), loopgroup.WithLoops(1), bad)
			assert.Error(t, err)
		}
	})
}

// TestNewFailureCleansUp: loop 2 of 4 cannot be built (an invalid option
// injected for that loop only): New returns the error, and the loops
// already built are shut down and release their drivers.
func TestNewFailureCleansUp(t *testing.T) {
	testenv.ForEachBackend(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		var built []*engine.Loop
		n := 0
		defer loopgroup.SetNewLoop(func(opts ...engine.Option) (*engine.Loop, error) {
			if n++; n == 3 {
				opts = append(opts, engine.WithIORatio(0))
			}
			return engine.New(opts...)
		})()
		_, err := loopgroup.New(loopgroup.WithLoops(4), loopgroup.WithEngineOptions(c.Options()...),
			loopgroup.WithThreads(loopgroup.Threads{Init: func(int, *engine.Loop) error { return nil }}),
			loopgroup.WithChooser(func(g *loopgroup.Group) func() *engine.Loop {
				built = g.Loops()
				return loopgroup.RoundRobin()(g)
			}))
		require.Error(t, err)
		assert.Contains(t, err.Error(), "building loop 2 of 4")
		assert.Nil(t, built, "the chooser is built only once every loop exists")
	})
}

// TestThreadInitFailureCleansUp: the setup of loop 1 fails on its thread;
// New shuts every loop down (they had started) and returns the error.
func TestThreadInitFailureCleansUp(t *testing.T) {
	testenv.ForEachBackend(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		ran := make(chan int, 3)
		_, err := loopgroup.New(loopgroup.WithLoops(3), loopgroup.WithEngineOptions(c.Options()...),
			loopgroup.WithThreads(loopgroup.Threads{Init: func(i int, l *engine.Loop) error {
				if !l.InEventLoop() {
					return fmt.Errorf("init of loop %d off its thread", i)
				}
				ran <- i
				if i == 1 {
					return fmt.Errorf("refused")
				}
				return nil
			}}))
		require.Error(t, err)
		assert.Contains(t, err.Error(), "setting up loop 1")
		assert.Contains(t, err.Error(), "refused")
		assert.Len(t, ran, 3)
	})
}

// TestCPUAffinityAndThreadNames: each loop's thread is pinned to its CPU and
// carries its loop's name; a CPU that does not exist fails New.
func TestCPUAffinityAndThreadNames(t *testing.T) {
	var all unix.CPUSet
	require.NoError(t, unix.SchedGetaffinity(0, &all))
	var cpus []int
	for i := range 1024 {
		if all.IsSet(i) {
			cpus = append(cpus, i)
		}
	}
	testenv.ForEachBackend(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		g := newGroup(t, c, loopgroup.WithLoops(2), loopgroup.WithName("pinned-loop-name-long"),
			loopgroup.WithThreads(loopgroup.Threads{CPUs: []int{cpus[len(cpus)-1]}, Names: true}))
		for i, l := range g.Loops() {
			assert.Equal(t, engine.Started, l.State(), "thread setup starts the loops")
			type info struct {
				set  unix.CPUSet
				name string
			}
			v, err := engine.Submit(l, func() (info, error) {
				var in info
				err := unix.SchedGetaffinity(0, &in.set)
				b, _ := os.ReadFile(fmt.Sprintf("/proc/self/task/%d/comm", unix.Gettid()))
				in.name = strings.TrimSpace(string(b))
				return in, err
			}).Await(context.Background())
			require.NoError(t, err)
			assert.Equal(t, 1, v.set.Count(), "loop %d", i)
			assert.True(t, v.set.IsSet(cpus[len(cpus)-1]))
			assert.Equal(t, "pinned-loop-nam", v.name, "15 bytes of the loop name")
		}

		_, err := loopgroup.New(loopgroup.WithLoops(2), loopgroup.WithEngineOptions(c.Options()...),
			loopgroup.WithThreads(loopgroup.Threads{CPUs: []int{cpus[0], 100000}}))
		require.Error(t, err)
		assert.Contains(t, err.Error(), "setting up loop 1")
	})
}

// TestShutdownAggregation: the group's Done is closed and its Shutdown
// returns nil only once every loop has terminated; its State is the least
// advanced loop's.
func TestShutdownAggregation(t *testing.T) {
	testenv.ForEachBackend(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		g, err := loopgroup.New(loopgroup.WithLoops(3), loopgroup.WithEngineOptions(c.Options()...))
		require.NoError(t, err)
		// Loop 1 is busy until released: it cannot terminate before.
		release := make(chan struct{})
		started := make(chan struct{})
		require.NoError(t, g.Loops()[1].Execute(tasks.Func(func() { close(started); <-release })))
		<-started
		require.NoError(t, g.Loops()[0].Execute(tasks.Func(func() {})))

		assert.Error(t, g.ShutdownGracefully(-1, time.Second))
		assert.Error(t, g.ShutdownGracefully(time.Second, 0))
		assert.Less(t, g.State(), engine.ShuttingDown, "invalid arguments change nothing")

		// Shut down only loop 0: the group is not shutting down yet.
		require.NoError(t, g.Loops()[0].Close())
		assert.Less(t, g.State(), engine.ShuttingDown)
		select {
		case <-g.Done():
			t.Fatal("Done closed with two loops running")
		default:
		}

		require.NoError(t, g.ShutdownGracefully(0, 5*time.Second))
		assert.GreaterOrEqual(t, g.State(), engine.ShuttingDown)
		assert.ErrorIs(t, g.Execute(tasks.Func(func() {})), engine.ErrShutdown)
		testenv.Eventually(t, 5*time.Second, "loop 2 terminated", func() bool { return g.Loops()[2].State() == engine.Terminated })
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		assert.ErrorIs(t, g.Shutdown(ctx), context.DeadlineExceeded, "loop 1 is still busy")
		assert.Less(t, g.State(), engine.Terminated)
		close(release)
		require.NoError(t, g.Shutdown(context.Background()))
		assert.Equal(t, engine.Terminated, g.State())
		select {
		case <-g.Done():
		default:
			t.Fatal("Done not closed after Shutdown returned nil")
		}
		require.NoError(t, g.Close(), "Close after termination")
	})
}

// TestGroupShutdownContextEndsFirst: with a loop busy in a task the group
// cannot terminate, so Shutdown with an expired context returns its error;
// the shutdown goes on and the group terminates once the task ends.
func TestGroupShutdownContextEndsFirst(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		g, err := loopgroup.New(loopgroup.WithLoops(2), loopgroup.WithEngineOptions(c.Options()...))
		require.NoError(t, err)
		release, started := make(chan struct{}), make(chan struct{})
		require.NoError(t, g.Loops()[1].Execute(tasks.Func(func() { close(started); <-release })))
		<-started
		ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
		defer cancel()
		require.ErrorIs(t, g.Shutdown(ctx), context.DeadlineExceeded)
		assert.GreaterOrEqual(t, g.State(), engine.ShuttingDown, "the shutdown has begun")
		close(release)
		select {
		case <-g.Done():
		case <-time.After(time.Minute):
			t.Fatal("the group did not terminate")
		}
		assert.Equal(t, engine.Terminated, g.State())
		require.NoError(t, g.Close())
	})
}

func TestGroupDoneDoesNotAllocate(t *testing.T) {
	g, err := loopgroup.New(loopgroup.WithLoops(2), loopgroup.WithEngineOptions(engine.WithBackend(engine.BackendEpoll)))
	require.NoError(t, err)
	defer g.Close()
	require.Zero(t, testing.AllocsPerRun(100, func() { _ = g.Done() }))
	require.Equal(t, g.Done(), g.Done(), "one channel for every call")
}
