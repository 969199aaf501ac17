package loopgroup_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ringloop/ringloop/examples/echo"
	"github.com/ringloop/ringloop/internal/testenv"
	"github.com/ringloop/ringloop/loopgroup"
)

// TestGroupMetrics: the metrics of a group's loops, named after the group,
// count the connections its server placed on them.
func TestGroupMetrics(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		g := newGroup(t, c, loopgroup.WithLoops(2), loopgroup.WithName("w"))
		srv, err := loopgroup.Serve(g, "tcp", "127.0.0.1:0", &echo.Handler{})
		require.NoError(t, err)
		defer srv.Close()
		conns := echoMany(t, srv.Addr().String(), 4)
		defer closeAll(conns)

		var names []string
		for _, l := range g.Loops() {
			names = append(names, l.Name())
		}
		require.Equal(t, []string{"w-0", "w-1"}, names)
		testenv.Eventually(t, 10*time.Second, "4 connections in the loops' metrics", func() bool {
			total := 0
			for _, l := range g.Loops() {
				total += l.Metrics().Connections
			}
			return total == 4
		})
	})
}
