package loopapi_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/internal/loopapi"
	"github.com/ringloop/ringloop/internal/loopctl"
)

// queuer is a loopctl.Loop that queues what it is given, as a loop that
// does not know the request would: Open must not take that for an answer.
type queuer struct{ got []loopctl.Task }

func (q *queuer) Control(t loopctl.Task) error { q.got = append(q.got, t); return nil }

// TestOpenThroughControl: an engine loop answers Open at once, without
// starting (nothing is queued), and its counters are the ones its Metrics
// publish; a Control that does not answer gives an error, not a nil
// Internals.
func TestOpenThroughControl(t *testing.T) {
	l, err := engine.New(engine.WithBackend(engine.BackendEpoll))
	require.NoError(t, err)
	t.Cleanup(func() { _ = l.Close() })
	in, err := loopapi.Open(l)
	require.NoError(t, err)
	require.NotNil(t, in.Driver())
	require.Equal(t, engine.NotStarted, l.State(), "answered, not queued")
	require.NoError(t, in.OnLoop(func() error {
		in.Packets().In += 3
		return nil
	}))
	require.Eventually(t, func() bool {
		_ = l.Execute(nopTask{}) // an iteration publishes the counts
		return l.Metrics().PacketsReceived == 3
	}, 30*time.Second, 10*time.Millisecond)

	q := &queuer{}
	_, err = loopapi.Open(q)
	require.Error(t, err)
}

type nopTask struct{}

func (nopTask) Run() {}
