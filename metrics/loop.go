package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ringloop/ringloop/engine"
)

// loopFamily is one field of engine.Metrics as a Prometheus family.
type loopFamily struct {
	desc  *prometheus.Desc
	kind  prometheus.ValueType
	value func(*engine.Metrics) float64
	field string // the engine.Metrics field, for the test that every one is exported
}

var loopLabels = []string{"loop", "backend", "mode"}

func loopCounter(name, help, field string, v func(*engine.Metrics) float64) loopFamily {
	return loopFamily{prometheus.NewDesc(Namespace+"_loop_"+name, help, loopLabels, nil), prometheus.CounterValue, v, field}
}

func loopGauge(name, help, field string, v func(*engine.Metrics) float64) loopFamily {
	return loopFamily{prometheus.NewDesc(Namespace+"_loop_"+name, help, loopLabels, nil), prometheus.GaugeValue, v, field}
}

func secs(d time.Duration) float64 { return d.Seconds() }

// loopFamilies are engine.Metrics' fields, each once (TestEveryLoopMetric).
var loopFamilies = []loopFamily{
	loopCounter("iterations_total", "Loop iterations.", "Iterations", func(m *engine.Metrics) float64 { return float64(m.Iterations) }),
	loopCounter("waits_total", "Driver waits, blocking or not.", "Waits", func(m *engine.Metrics) float64 { return float64(m.Waits) }),
	loopCounter("wakes_total", "Wake-ups of a sleeping loop issued by producers.", "Wakes", func(m *engine.Metrics) float64 { return float64(m.Wakes) }),
	loopCounter("completions_total", "I/O completions dispatched.", "Completions", func(m *engine.Metrics) float64 { return float64(m.Completions) }),
	loopCounter("stale_completions_total", "Completions dropped as stale.", "Stale", func(m *engine.Metrics) float64 { return float64(m.Stale) }),
	loopCounter("tasks_total", "Tasks, timers and tail tasks run.", "TasksRun", func(m *engine.Metrics) float64 { return float64(m.TasksRun) }),
	loopCounter("panics_total", "Tasks and handlers that panicked.", "Panics", func(m *engine.Metrics) float64 { return float64(m.Panics) }),
	loopCounter("empty_wakeups_total", "Premature empty returns from blocking waits.", "EmptyWakeups", func(m *engine.Metrics) float64 { return float64(m.EmptyWakeups) }),
	loopCounter("wait_errors_total", "Driver waits that failed.", "WaitErrors", func(m *engine.Metrics) float64 { return float64(m.WaitErrors) }),
	loopCounter("accept_errors_total", "Accepts that failed on this loop's listeners.", "AcceptErrors", func(m *engine.Metrics) float64 { return float64(m.AcceptErrors) }),
	loopCounter("accepted_total", "Connections this loop's listeners accepted.", "Accepted", func(m *engine.Metrics) float64 { return float64(m.Accepted) }),
	loopCounter("handoffs_total", "Accepted connections handed to other loops.", "Handoffs", func(m *engine.Metrics) float64 { return float64(m.Handoffs) }),
	loopCounter("msgring_handoffs_total", "Hand-offs posted with IORING_OP_MSG_RING.", "MsgRingHandoffs", func(m *engine.Metrics) float64 { return float64(m.MsgRingHandoffs) }),
	loopCounter("handoff_fallbacks_total", "MSG_RING hand-offs refused and sent as tasks.", "HandoffFallbacks", func(m *engine.Metrics) float64 { return float64(m.HandoffFallbacks) }),
	loopCounter("packets_received_total", "Datagrams delivered to OnPacket.", "PacketsReceived", func(m *engine.Metrics) float64 { return float64(m.PacketsReceived) }),
	loopCounter("packets_sent_total", "Datagrams the kernel took.", "PacketsSent", func(m *engine.Metrics) float64 { return float64(m.PacketsSent) }),
	loopCounter("packets_dropped_total", "Datagrams lost on the loop's side: over MaxSize, refused by the kernel, or queued at close.", "PacketsDropped", func(m *engine.Metrics) float64 { return float64(m.PacketsDropped) }),
	loopCounter("spins_total", "Driver polls made spinning instead of blocking.", "Spins", func(m *engine.Metrics) float64 { return float64(m.Spins) }),
	loopCounter("io_seconds_total", "Time spent handling completions.", "IOTime", func(m *engine.Metrics) float64 { return secs(m.IOTime) }),
	loopCounter("task_seconds_total", "Time spent running tasks.", "TaskTime", func(m *engine.Metrics) float64 { return secs(m.TaskTime) }),
	loopGauge("longest_seconds", "Longest completion batch.", "Longest", func(m *engine.Metrics) float64 { return secs(m.Longest) }),
	loopGauge("pending_tasks", "Tasks waiting in the task rings.", "Pending", func(m *engine.Metrics) float64 { return float64(m.Pending) }),
	loopGauge("timers", "Pending timers.", "Timers", func(m *engine.Metrics) float64 { return float64(m.Timers) }),
	loopGauge("registrations", "Live connections, listeners and fd watches.", "Registered", func(m *engine.Metrics) float64 { return float64(m.Registered) }),
	loopGauge("connections", "Live connections.", "Connections", func(m *engine.Metrics) float64 { return float64(m.Connections) }),
}
