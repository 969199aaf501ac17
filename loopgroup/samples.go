package loopgroup

import (
	"expvar"

	"github.com/ringloop/ringloop/engine"
)

// Samples returns every loop's metrics as samples (see engine.Sample), each
// labelled with its loop's name and backend, in loop order: what a
// Prometheus collector for the group reads.
func (g *Group) Samples() []engine.Sample {
	var out []engine.Sample
	for _, l := range g.loops {
		out = append(out, l.Samples()...)
	}
	return out
}

// Snapshots returns each loop's labels and metrics, in loop order.
func (g *Group) Snapshots() []engine.Snapshot {
	out := make([]engine.Snapshot, len(g.loops))
	for i, l := range g.loops {
		out[i] = l.Snapshot()
	}
	return out
}

// Var returns the group's metrics as an expvar.Var (JSON: a list of loop
// snapshots): expvar.Publish("ringloop", group.Var()).
func (g *Group) Var() expvar.Var {
	return expvar.Func(func() any { return g.Snapshots() })
}
