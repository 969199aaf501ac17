package engine_test

import (
	"encoding/json"
	"io"
	"net"
	"reflect"
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

func sample(ss []engine.Sample, name string) (engine.Sample, bool) {
	for _, s := range ss {
		if s.Name == name {
			return s, true
		}
	}
	return engine.Sample{}, false
}

// TestSamplesAndVar: a loop's exported samples and expvar follow what it
// does (connections, hand-offs, iterations), with its labels.
func TestSamplesAndVar(t *testing.T) {
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
			s, _ := sample(worker.Samples(), "connections")
			return s.Value == 1
		})
		ws := worker.Samples()
		it, ok := sample(ws, "iterations_total")
		require.True(t, ok)
		require.Equal(t, engine.Counter, it.Kind)
		require.Positive(t, it.Value)
		require.Equal(t, []engine.Label{{Name: "loop", Value: "worker"}, {Name: "backend", Value: worker.Backend().Name.String()},
			{Name: "mode", Value: c.Threading.String()}}, it.Labels)
		conns, _ := sample(ws, "connections")
		require.Equal(t, engine.Gauge, conns.Kind)
		ho, _ := sample(boss.Samples(), "handoffs_total")
		require.Equal(t, 1.0, ho.Value, "the boss handed one connection over")
		hs := ln.HandoffStats()
		require.Equal(t, hs.Task+hs.MsgRing, uint64(ho.Value))

		var snap engine.Snapshot
		require.NoError(t, json.Unmarshal([]byte(worker.Var().String()), &snap))
		require.Equal(t, "worker", snap.Loop)
		require.Equal(t, worker.Backend().Name.String(), snap.Backend)
		require.Equal(t, c.Threading.String(), snap.Mode)
		require.Equal(t, 1, snap.Connections)
		require.Positive(t, snap.Iterations)

		require.NoError(t, nc.Close())
		testenv.Eventually(t, 10*time.Second, "the connection gauge back to 0", func() bool {
			return worker.Metrics().Connections == 0
		})
	})
}

// TestSamplesCoverMetrics: every Metrics field is exported, each once.
func TestSamplesCoverMetrics(t *testing.T) {
	l, err := engine.New()
	require.NoError(t, err)
	defer l.Close()
	ss := l.Samples()
	names := map[string]bool{}
	for _, s := range ss {
		require.False(t, names[s.Name], "sample %s twice", s.Name)
		names[s.Name] = true
		require.NotEmpty(t, s.Help, s.Name)
	}
	require.Len(t, ss, reflect.TypeFor[engine.Metrics]().NumField(),
		"a Metrics field is missing from Loop.Samples (engine/export.go)")
}
