package engine_test

import (
	"context"
	"flag"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/internal/testenv"
)

func TestThreadingOptionAndEnv(t *testing.T) {
	for _, th := range []engine.Threading{engine.ThreadingParked, engine.ThreadingLocked} {
		var got engine.Threading
		require.NoError(t, got.UnmarshalText([]byte(th.String())))
		require.Equal(t, th, got)
		text, err := th.MarshalText()
		require.NoError(t, err)
		require.Equal(t, th.String(), string(text))
	}
	// flag.TextVar takes it.
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	var th engine.Threading
	fs.TextVar(&th, "threading", engine.Threading(0), "")
	require.NoError(t, fs.Parse([]string{"-threading", "locked"}))
	require.Equal(t, engine.ThreadingLocked, th)
	require.Error(t, fs.Parse([]string{"-threading", "pinned"}))
	_, err := engine.New(engine.WithThreading(0))
	require.Error(t, err, "an unset mode is not a choice")

	// Without a choice a loop runs parked, on both backends.
	t.Setenv(testenv.ThreadingEnv, "")
	l, err := engine.New()
	require.NoError(t, err)
	defer l.Close()
	b := l.Backend().Name
	require.Equal(t, engine.ThreadingParked, l.Backend().Threading, "auto chose %s", b)
	le, err := engine.New(engine.WithBackend(engine.BackendEpoll))
	require.NoError(t, err)
	defer le.Close()
	require.Equal(t, engine.ThreadingParked, le.Backend().Threading)
	if testenv.RunsUring(t) {
		lu, err := engine.New(engine.WithBackend(engine.BackendUring))
		require.NoError(t, err)
		defer lu.Close()
		require.Equal(t, engine.ThreadingParked, lu.Backend().Threading)
		require.Equal(t, engine.ThreadingParked, lu.Backend().Threading)
	}

	require.Contains(t, l.Backend().String(), "parked")
	require.Contains(t, l.String(), "parked")
	t.Setenv(testenv.ThreadingEnv, "locked")
	l2, err := engine.New()
	require.NoError(t, err)
	defer l2.Close()
	require.Equal(t, engine.ThreadingLocked, l2.Backend().Threading, "the environment chose")
	require.Equal(t, engine.ThreadingLocked, l2.Backend().Threading)
	require.Contains(t, l2.Backend().String(), "locked")

	t.Setenv(testenv.ThreadingEnv, "spinning")
	_, err = engine.New()
	require.ErrorContains(t, err, testenv.ThreadingEnv, "the error names the variable")
	l3, err := engine.New(engine.WithThreading(engine.ThreadingLocked))
	require.NoError(t, err, "an option wins over a bad environment")
	defer l3.Close()
	require.Equal(t, engine.ThreadingLocked, l3.Backend().Threading)
}

// TestInEventLoopAndThreadID: InEventLoop is true exactly on the loop's
// goroutine in both modes (a parked loop moves between threads, so it
// cannot be a thread test); only a locked loop reports a thread id.
func TestInEventLoopAndThreadID(t *testing.T) {
	testenv.ForEachBackend(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		l := newLoop(t, c)
		require.False(t, l.InEventLoop())
		type probe struct{ in, other bool }
		p, err := engine.Submit(l, func() (probe, error) {
			ch := make(chan bool)
			go func() { ch <- l.InEventLoop() }()
			return probe{in: l.InEventLoop(), other: <-ch}, nil
		}).Await(context.Background())
		require.NoError(t, err)
		require.True(t, p.in, "on the loop")
		require.False(t, p.other, "a goroutine the loop started")
		require.False(t, l.InEventLoop(), "the test goroutine")
		if c.Threading == engine.ThreadingLocked {
			require.NotZero(t, l.ThreadID())
		} else {
			require.Zero(t, l.ThreadID())
		}
		require.True(t, strings.HasPrefix(l.Backend().String(), c.Backend.String()+" "+c.Threading.String()+" ("))
		require.NoError(t, l.Close())
		require.False(t, l.InEventLoop())
	})
}
