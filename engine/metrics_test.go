package engine_test

import (
	"io"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/internal/testenv"
)

type echoConn struct{}

func (echoConn) OnOpen(*engine.Conn)               {}
func (echoConn) OnData(c *engine.Conn, b []byte)   { _, _ = c.Write(b) }
func (echoConn) OnClose(c *engine.Conn, err error) {}

// TestMetrics: a loop's metrics follow what it does (connections,
// hand-offs, iterations).
func TestMetrics(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		boss := newLoop(t, c, engine.WithName("boss"))
		worker := newLoop(t, c, engine.WithName("worker"))
		ln, err := engine.Listen(boss, "tcp", "127.0.0.1:0", echoConn{}, engine.WithWorkers(worker))
		require.NoError(t, err)
		defer ln.Close()
		nc, err := net.DialTimeout("tcp", ln.Addr().String(), 10*time.Second)
		require.NoError(t, err)
		_, err = nc.Write([]byte("ping"))
		require.NoError(t, err)
		_, err = io.ReadFull(nc, make([]byte, 4))
		require.NoError(t, err)

		testenv.Eventually(t, 10*time.Second, "the worker's connection gauge", func() bool {
			return worker.Metrics().Connections == 1
		})
		m := worker.Metrics()
		require.Positive(t, m.Iterations)
		require.Positive(t, m.Completions)
		require.GreaterOrEqual(t, m.Registered, m.Connections)
		require.EqualValues(t, 1, boss.Metrics().Handoffs, "the boss handed one connection over")
		bm := boss.Metrics()
		require.EqualValues(t, 1, bm.Accepted)
		// MSG_RING only between two rings that have it, once the worker
		// runs (else a task).
		require.LessOrEqual(t, bm.MsgRingHandoffs+bm.HandoffFallbacks, uint64(1))
		if !boss.Backend().Features.MsgRing || !worker.Backend().Features.MsgRing {
			require.Zero(t, bm.MsgRingHandoffs+bm.HandoffFallbacks, "a task where MSG_RING is missing")
		}

		require.NoError(t, nc.Close())
		testenv.Eventually(t, 10*time.Second, "the connection gauge back to 0", func() bool {
			return worker.Metrics().Connections == 0
		})
	})
}
