package loopgroup_test

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/internal/testenv"
	"github.com/ringloop/ringloop/loopgroup"
)

// defaultLoops is WithLoops' default for threading mode th: one loop per
// GOMAXPROCS, one fewer (at least one) for locked loops, which leave a P for
// the scheduler.
func defaultLoops(th engine.Threading) int {
	if th == engine.ThreadingLocked {
		return max(1, runtime.GOMAXPROCS(0)-1)
	}
	return runtime.GOMAXPROCS(0)
}

// TestThreadingAndDefaultLoops: the loop count follows the loops'
// threading mode, chosen by an engine option, the environment or the first
// loop's backend; thread settings select locked loops and refuse parked
// ones.
func TestThreadingAndDefaultLoops(t *testing.T) {

	for _, th := range []engine.Threading{engine.ThreadingParked, engine.ThreadingLocked} {
		g, err := loopgroup.New(loopgroup.WithEngineOptions(engine.WithThreading(th)))
		require.NoError(t, err)
		require.Equal(t, defaultLoops(th), len(g.Loops()))
		for _, l := range g.Loops() {
			require.Equal(t, th, l.Backend().Threading)
		}
		require.NoError(t, g.Close())
	}

	// Without a choice the first loop's backend decides the mode, and the
	// count and the other loops follow it.
	for _, b := range []engine.Backend{engine.BackendEpoll, engine.BackendUring} {
		if b == engine.BackendUring && !testenv.RunsUring(t) {
			continue
		}
		g, err := loopgroup.New(loopgroup.WithEngineOptions(engine.WithBackend(b)))
		require.NoError(t, err)
		th := engine.ThreadingParked // the default on both backends
		require.Equal(t, defaultLoops(th), len(g.Loops()), "%v", b)
		for _, l := range g.Loops() {
			require.Equal(t, th, l.Backend().Threading, "%v", b)
		}
		require.NoError(t, g.Close())
	}
	t.Setenv(testenv.ThreadingEnv, "locked")
	g, err := loopgroup.New(loopgroup.WithEngineOptions(engine.WithBackend(engine.BackendUring)))
	if testenv.RunsUring(t) {
		require.NoError(t, err)
		require.Equal(t, defaultLoops(engine.ThreadingLocked), len(g.Loops()), "the environment chose")
		require.Equal(t, engine.ThreadingLocked, g.Loops()[0].Backend().Threading)
		require.NoError(t, g.Close())
	}
	t.Setenv(testenv.ThreadingEnv, "")

	// Thread settings need locked loops: they select them, over an engine
	// option.
	g, err = loopgroup.New(loopgroup.WithLoops(1), loopgroup.WithThreads(loopgroup.Threads{CPUs: []int{0}}))
	require.NoError(t, err)
	require.Equal(t, engine.ThreadingLocked, g.Loops()[0].Backend().Threading)
	require.NotZero(t, g.Loops()[0].ThreadID())
	require.NoError(t, g.Close())
	g, err = loopgroup.New(loopgroup.WithLoops(1), loopgroup.WithEngineOptions(engine.WithThreading(engine.ThreadingParked)),
		loopgroup.WithThreads(loopgroup.Threads{Names: true}))
	require.NoError(t, err)
	require.Equal(t, engine.ThreadingLocked, g.Loops()[0].Backend().Threading)
	require.NoError(t, g.Close())
}
