package engine_test

import (
	"fmt"
	"strings"

	"github.com/ringloop/ringloop/engine"
)

// Exporting a loop's metrics to Prometheus without depending on it: each
// Sample maps one to one to a Prometheus metric. With
// github.com/prometheus/client_golang a collector is ten lines:
//
//	func (c loopCollector) Describe(ch chan<- *prometheus.Desc) { prometheus.DescribeByCollect(c, ch) }
//	func (c loopCollector) Collect(ch chan<- prometheus.Metric) {
//		for _, s := range c.loop.Samples() { // or a loopgroup.Group's Samples
//			var names, values []string
//			for _, l := range s.Labels {
//				names, values = append(names, l.Name), append(values, l.Value)
//			}
//			kind := map[engine.SampleKind]prometheus.ValueType{engine.Counter: prometheus.CounterValue, engine.Gauge: prometheus.GaugeValue}[s.Kind]
//			ch <- prometheus.MustNewConstMetric(prometheus.NewDesc("ringloop_"+s.Name, s.Help, names, nil), kind, s.Value, values...)
//		}
//	}
//
// Here the loop's samples are written in Prometheus's text format, which a
// Prometheus server scrapes as it is; expvar.Publish("ringloop", loop.Var())
// serves them on /debug/vars.
func ExampleLoop_Samples() {
	loop, err := engine.New(engine.WithName("main"), engine.WithBackend(engine.BackendEpoll), engine.WithThreading(engine.ThreadingLocked))
	if err != nil {
		panic(err)
	}
	defer loop.Close()

	var b strings.Builder
	for _, s := range loop.Samples() {
		fmt.Fprintf(&b, "# HELP ringloop_%s %s\n# TYPE ringloop_%s %s\nringloop_%s{", s.Name, s.Help, s.Name, s.Kind, s.Name)
		for i, l := range s.Labels {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, "%s=%q", l.Name, l.Value)
		}
		fmt.Fprintf(&b, "} %g\n", s.Value)
	}
	text := b.String()
	i := strings.Index(text, "# HELP ringloop_connections ")
	fmt.Print(text[i:])
	// Output:
	// # HELP ringloop_connections Live connections.
	// # TYPE ringloop_connections gauge
	// ringloop_connections{loop="main",backend="epoll",mode="locked"} 0
}
