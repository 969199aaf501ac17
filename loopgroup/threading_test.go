package loopgroup_test

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/internal/testenv"
	"github.com/ringloop/ringloop/loopgroup"
)

func TestThreadingAndDefaultLoops(t *testing.T) {
	procs := runtime.GOMAXPROCS(0)
	require.Equal(t, procs, loopgroup.DefaultLoopsFor(engine.ThreadingParked))
	require.Equal(t, max(1, procs-1), loopgroup.DefaultLoopsFor(engine.ThreadingLocked),
		"locked loops leave a P for the scheduler")

	for _, th := range []engine.Threading{engine.ThreadingParked, engine.ThreadingLocked} {
		g, err := loopgroup.New(loopgroup.WithThreading(th))
		require.NoError(t, err)
		require.Equal(t, loopgroup.DefaultLoopsFor(th), g.Len())
		for _, l := range g.All() {
			require.Equal(t, th, l.Threading())
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
		th := engine.DefaultThreading(b)
		require.Equal(t, loopgroup.DefaultLoopsFor(th), g.Len(), "%v", b)
		for _, l := range g.All() {
			require.Equal(t, th, l.Threading(), "%v", b)
		}
		require.NoError(t, g.Close())
	}
	t.Setenv(engine.ThreadingEnv, "locked")
	g, err := loopgroup.New(loopgroup.WithEngineOptions(engine.WithBackend(engine.BackendUring)))
	if testenv.RunsUring(t) {
		require.NoError(t, err)
		require.Equal(t, loopgroup.DefaultLoopsFor(engine.ThreadingLocked), g.Len(), "the environment chose")
		require.Equal(t, engine.ThreadingLocked, g.Loop(0).Threading())
		require.NoError(t, g.Close())
	}
	t.Setenv(engine.ThreadingEnv, "")

	// Thread settings need locked loops: they select them, and refuse parked.
	g, err = loopgroup.New(loopgroup.WithLoops(1), loopgroup.WithCPUAffinity(0))
	require.NoError(t, err)
	require.Equal(t, engine.ThreadingLocked, g.Loop(0).Threading())
	require.NotZero(t, g.Loop(0).ThreadID())
	require.NoError(t, g.Close())
	_, err = loopgroup.New(loopgroup.WithThreading(engine.ThreadingParked), loopgroup.WithCPUAffinity(0))
	require.ErrorContains(t, err, "ThreadingLocked")
	_, err = loopgroup.New(loopgroup.WithThreading(0))
	require.Error(t, err)
}
