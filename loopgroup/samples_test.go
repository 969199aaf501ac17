package loopgroup_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/examples/echo"
	"github.com/ringloop/ringloop/internal/testenv"
	"github.com/ringloop/ringloop/loopgroup"
)

// TestGroupSamples: the group's samples and expvar cover every loop and
// count the connections its server placed on them.
func TestGroupSamples(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		g := newGroup(t, c, loopgroup.WithLoops(2), loopgroup.WithName("w"))
		srv, err := loopgroup.Serve(g, "tcp", "127.0.0.1:0", &echo.Handler{})
		require.NoError(t, err)
		defer srv.Close()
		conns := echoMany(t, srv.Addr().String(), 4)
		defer closeAll(conns)

		testenv.Eventually(t, 10*time.Second, "4 connections in the group's samples", func() bool {
			total := 0.0
			for _, s := range g.Samples() {
				if s.Name == "connections" {
					total += s.Value
				}
			}
			return total == 4
		})
		loops := map[string]bool{}
		for _, s := range g.Samples() {
			require.Equal(t, "loop", s.Labels[0].Name)
			loops[s.Labels[0].Value] = true
		}
		require.Equal(t, map[string]bool{"w-0": true, "w-1": true}, loops)

		var snaps []engine.Snapshot
		require.NoError(t, json.Unmarshal([]byte(g.Var().String()), &snaps))
		require.Len(t, snaps, 2)
		require.Equal(t, "w-0", snaps[0].Loop)
		require.Equal(t, 4, snaps[0].Connections+snaps[1].Connections)
	})
}
