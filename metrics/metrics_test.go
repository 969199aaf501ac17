package metrics_test

import (
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/httpserver"
	"github.com/ringloop/ringloop/internal/testenv"
	"github.com/ringloop/ringloop/loopgroup"
	"github.com/ringloop/ringloop/metrics"
)

// TestCollector: a pedantic registry gathers every loop metric of every
// loop added, each labelled with the loop's name, and a server's four
// families with none missing; loops added after registration are
// collected; a loop added twice counts once; two loops of one name, two
// servers of one name and nil arguments are refused with an error naming
// the fix.
func TestCollector(t *testing.T) {
	testenv.ForEachBackend(t, func(t *testing.T, c testenv.Combo) {
		g, err := loopgroup.New(loopgroup.WithName("workers"), loopgroup.WithLoops(2), loopgroup.WithEngineOptions(c.Options()...))
		require.NoError(t, err)
		defer g.Close()
		srv, err := httpserver.New(http.NotFoundHandler())
		require.NoError(t, err)

		col := metrics.New()
		reg := prometheus.NewPedanticRegistry()
		require.NoError(t, reg.Register(col))
		require.NoError(t, col.AddGroup(g))
		require.NoError(t, col.AddGroup(g), "a group added twice")
		require.NoError(t, col.AddServer("api", srv))
		solo, err := engine.New(append(c.Options(), engine.WithName("solo"))...)
		require.NoError(t, err)
		defer solo.Close()
		require.NoError(t, col.AddLoops(solo))

		fams, err := reg.Gather()
		require.NoError(t, err)
		byName := map[string]int{}
		loops := map[string]map[string]bool{}
		for _, f := range fams {
			byName[f.GetName()] = len(f.GetMetric())
			for _, m := range f.GetMetric() {
				for _, lp := range m.GetLabel() {
					if lp.GetName() == "loop" {
						if loops[f.GetName()] == nil {
							loops[f.GetName()] = map[string]bool{}
						}
						loops[f.GetName()][lp.GetValue()] = true
					}
				}
			}
		}
		loopFams := 0
		for name := range byName {
			if strings.HasPrefix(name, "ringloop_loop_") {
				loopFams++
				require.Equal(t, 3, byName[name], name)
				require.Equal(t, map[string]bool{"workers-0": true, "workers-1": true, "solo": true}, loops[name], name)
			}
		}
		require.Equal(t, reflect.TypeFor[engine.Metrics]().NumField(), loopFams, "one family per engine.Metrics field")
		require.Equal(t, 1, byName["ringloop_http_connections"])
		require.Equal(t, 5, byName["ringloop_http_responses_total"])
		require.Equal(t, 1, byName["ringloop_http_hijacked_total"])
		require.Equal(t, 1, byName["ringloop_http_request_duration_seconds"])
		require.Len(t, fams, loopFams+4, "no other family")

		twin, err := engine.New(append(c.Options(), engine.WithName("solo"))...)
		require.NoError(t, err)
		defer twin.Close()
		require.ErrorContains(t, col.AddLoops(twin), `two loops named "solo"`)
		require.ErrorContains(t, col.AddServer("api", srv), `two servers named "api"`)
		require.Error(t, col.AddLoops(nil))
		require.Error(t, col.AddGroup(nil))
		require.Error(t, col.AddServer("x", nil))
	})
}
