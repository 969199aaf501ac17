package engine

import (
	"expvar"
	"time"
)

// Exporting a loop's metrics: as samples in the shape of Prometheus's data
// model (name, help, counter or gauge, value, labels), so a collector
// translates them one to one without this module depending on Prometheus,
// and as an expvar.Var for /debug/vars.

// SampleKind says how a sample's value behaves.
type SampleKind uint8

// The sample kinds.
const (
	// Counter only grows (until the process restarts).
	Counter SampleKind = iota
	// Gauge goes up and down.
	Gauge
)

// String returns "counter" or "gauge", the Prometheus type names.
func (k SampleKind) String() string {
	if k == Gauge {
		return "gauge"
	}
	return "counter"
}

// Label is one name="value" pair that tells a loop's samples apart.
type Label struct{ Name, Value string }

// Sample is one exported metric value. Names are snake_case with the unit
// and "_total" suffixes Prometheus expects, without a namespace prefix.
type Sample struct {
	Name   string
	Help   string
	Kind   SampleKind
	Value  float64
	Labels []Label // shared by every sample of a loop: do not modify
}

// Labels names the loop in exported samples: "loop" (its name: WithName's,
// else "loop-<n>" or a group's "<group>-<index>", the same at every start
// of a service that builds its loops in the same order), "backend" (io_uring
// or epoll) and "mode" (its threading mode: parked or locked).
func (l *Loop) Labels() []Label {
	return []Label{{"loop", l.cfg.name}, {"backend", l.info.Name.String()}, {"mode", l.info.Threading.String()}}
}

// Samples returns the loop's metrics as samples, labelled with Labels.
func (l *Loop) Samples() []Sample {
	m := l.Metrics()
	lb := l.Labels()
	secs := func(d time.Duration) float64 { return d.Seconds() }
	return []Sample{
		{"iterations_total", "Loop iterations.", Counter, float64(m.Iterations), lb},
		{"waits_total", "Driver waits, blocking or not.", Counter, float64(m.Waits), lb},
		{"wakes_total", "Wake-ups of a sleeping loop issued by producers.", Counter, float64(m.Wakes), lb},
		{"completions_total", "I/O completions dispatched.", Counter, float64(m.Completions), lb},
		{"stale_completions_total", "Completions dropped as stale.", Counter, float64(m.Stale), lb},
		{"tasks_total", "Tasks, timers and tail tasks run.", Counter, float64(m.TasksRun), lb},
		{"panics_total", "Tasks and handlers that panicked.", Counter, float64(m.Panics), lb},
		{"empty_wakeups_total", "Premature empty returns from blocking waits.", Counter, float64(m.EmptyWakeups), lb},
		{"wait_errors_total", "Driver waits that failed.", Counter, float64(m.WaitErrors), lb},
		{"accept_errors_total", "Accepts that failed on this loop's listeners.", Counter, float64(m.AcceptErrors), lb},
		{"handoffs_total", "Accepted connections handed to other loops.", Counter, float64(m.Handoffs), lb},
		{"spins_total", "Driver polls made spinning instead of blocking.", Counter, float64(m.Spins), lb},
		{"io_seconds_total", "Time spent handling completions.", Counter, secs(m.IOTime), lb},
		{"task_seconds_total", "Time spent running tasks.", Counter, secs(m.TaskTime), lb},
		{"longest_seconds", "Longest completion batch.", Gauge, secs(m.Longest), lb},
		{"pending_tasks", "Tasks waiting in the task rings.", Gauge, float64(m.Pending), lb},
		{"timers", "Pending timers.", Gauge, float64(m.Timers), lb},
		{"registrations", "Live connections, listeners and fd watches.", Gauge, float64(m.Registered), lb},
		{"connections", "Live connections.", Gauge, float64(m.Connections), lb},
	}
}

// Var returns the loop's metrics as an expvar.Var (JSON: its labels and its
// Metrics): expvar.Publish("ringloop", loop.Var()).
func (l *Loop) Var() expvar.Var {
	return expvar.Func(func() any { return l.Snapshot() })
}

// Snapshot is a loop's labels and metrics in one value, what Var publishes.
type Snapshot struct {
	Loop    string
	Backend string
	Mode    string
	Metrics
}

// Snapshot returns the loop's labels and metrics.
func (l *Loop) Snapshot() Snapshot {
	lb := l.Labels()
	return Snapshot{Loop: lb[0].Value, Backend: lb[1].Value, Mode: lb[2].Value, Metrics: l.Metrics()}
}
