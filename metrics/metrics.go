// Package metrics exports ringloop's event loops and HTTP servers to
// Prometheus: a prometheus.Collector over what they already count.
//
//	col := metrics.New()
//	col.AddGroup(group)            // every loop of a loopgroup
//	col.AddServer("api", server)   // an httpserver.Server
//	reg := prometheus.NewRegistry()
//	reg.MustRegister(col)
//	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
//
// It is a module of its own (github.com/ringloop/ringloop/metrics), so that
// ringloop's core packages do not depend on client_golang.
//
// # What is exported
//
// Every loop's metrics (engine.Loop.Metrics: iterations, wakes,
// completions, tasks, panics, I/O and task time, the longest piece of work,
// pending tasks, timers, connections...), one family per field, named
// "ringloop_loop_" + the field's name in snake case with Prometheus's unit
// and _total suffixes (ringloop_loop_iterations_total,
// ringloop_loop_io_seconds_total, ringloop_loop_connections), and labelled
// loop (the loop's name: "loop-0", a group's "http-1"; stable across
// restarts of the same code), backend (io_uring, epoll) and mode (parked,
// locked).
//
// Every server's metrics (httpserver.Server.Metrics), labelled server
// (the name given to AddServer):
//
//	ringloop_http_connections{server}                open connections
//	ringloop_http_responses_total{server, code}      code: 1xx 2xx 3xx 4xx 5xx
//	ringloop_http_hijacked_total{server}
//	ringloop_http_request_duration_seconds{server}   a histogram (httpserver.Metrics.BucketBounds)
//
// Scraping reads the counters where they are (atomics), with no call into the
// loops: a stalled loop still reports, and a scrape costs the loops nothing.
// The collector is unchecked (its Describe sends nothing): the loops it covers
// may be added after it is registered.
package metrics

import (
	"fmt"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/httpserver"
	"github.com/ringloop/ringloop/loopgroup"
)

// Namespace prefixes every metric name.
const Namespace = "ringloop"

// Collector is a prometheus.Collector over loops and HTTP servers. Its
// methods are safe from any goroutine.
type Collector struct {
	mu      sync.Mutex
	loops   []*engine.Loop
	names   map[string]bool // loop names: a second loop of one name would make Gather fail later
	servers []namedServer
}

type namedServer struct {
	name string
	s    *httpserver.Server
}

var (
	connectionsDesc = prometheus.NewDesc(Namespace+"_http_connections",
		"Open HTTP connections (not those a handler took by Hijack or Upgrade).", []string{"server"}, nil)
	responseDesc = prometheus.NewDesc(Namespace+"_http_responses_total",
		"HTTP responses by status class (1xx..5xx), as the handler set them.", []string{"server", "code"}, nil)
	hijackedDesc = prometheus.NewDesc(Namespace+"_http_hijacked_total",
		"HTTP requests whose handler took the connection (Hijack).", []string{"server"}, nil)
	durationDesc = prometheus.NewDesc(Namespace+"_http_request_duration_seconds",
		"Time from calling the HTTP handler to its return.", []string{"server"}, nil)
)

// New returns an empty collector.
func New() *Collector {
	return &Collector{names: map[string]bool{}}
}

// AddLoops adds loops to export. A loop already added is skipped; a loop
// whose name another added loop has is refused (their series would
// collide): name them (engine.WithName, loopgroup.WithName).
func (c *Collector) AddLoops(loops ...*engine.Loop) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, l := range loops {
		if l == nil {
			return fmt.Errorf("metrics: nil loop")
		}
		if c.has(l) {
			continue
		}
		if c.names[l.Name()] {
			return fmt.Errorf("metrics: two loops named %q: give them distinct names (engine.WithName, loopgroup.WithName)", l.Name())
		}
		c.names[l.Name()] = true
		c.loops = append(c.loops, l)
	}
	return nil
}

func (c *Collector) has(l *engine.Loop) bool {
	for _, x := range c.loops {
		if x == l {
			return true
		}
	}
	return false
}

// AddGroup adds every loop of g (see AddLoops).
func (c *Collector) AddGroup(g *loopgroup.Group) error {
	if g == nil {
		return fmt.Errorf("metrics: nil group")
	}
	return c.AddLoops(g.Loops()...)
}

// AddServer adds an HTTP server's request metrics, labelled server=name.
// Its loops are added apart (AddGroup, AddLoops): a server may serve on
// several groups, and a group several servers.
func (c *Collector) AddServer(name string, s *httpserver.Server) error {
	if s == nil {
		return fmt.Errorf("metrics: nil server")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, x := range c.servers {
		if x.name == name {
			return fmt.Errorf("metrics: two servers named %q", name)
		}
	}
	c.servers = append(c.servers, namedServer{name, s})
	return nil
}

// Describe sends nothing: the collector is unchecked, since loops may be
// added after it is registered (see prometheus.Collector).
func (c *Collector) Describe(chan<- *prometheus.Desc) {}

// Collect sends every loop's metrics and every server's request metrics.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	loops := append([]*engine.Loop(nil), c.loops...)
	servers := append([]namedServer(nil), c.servers...)
	c.mu.Unlock()
	for _, l := range loops {
		collectLoop(ch, l)
	}
	for _, s := range servers {
		collectServer(ch, s)
	}
}

func collectLoop(ch chan<- prometheus.Metric, l *engine.Loop) {
	m := l.Metrics()
	info := l.Backend()
	for _, f := range loopFamilies {
		ch <- prometheus.MustNewConstMetric(f.desc, f.kind, f.value(&m), l.Name(), info.Name.String(), info.Threading.String())
	}
}

func collectServer(ch chan<- prometheus.Metric, s namedServer) {
	m := s.s.Metrics()
	ch <- prometheus.MustNewConstMetric(connectionsDesc, prometheus.GaugeValue, float64(m.Connections), s.name)
	for i, n := range m.Responses {
		ch <- prometheus.MustNewConstMetric(responseDesc, prometheus.CounterValue, float64(n), s.name, statusClasses[i])
	}
	ch <- prometheus.MustNewConstMetric(hijackedDesc, prometheus.CounterValue, float64(m.Hijacked), s.name)
	buckets := make(map[float64]uint64, len(m.BucketBounds))
	var cum uint64
	for i, le := range m.BucketBounds {
		cum += m.Buckets[i]
		buckets[le.Seconds()] = cum
	}
	ch <- prometheus.MustNewConstHistogram(durationDesc, m.Requests, m.HandlerTime.Seconds(), buckets, s.name)
}

// statusClasses label httpserver.Metrics.Responses' classes.
var statusClasses = [len(httpserver.Metrics{}.Responses)]string{"1xx", "2xx", "3xx", "4xx", "5xx"}

var _ prometheus.Collector = (*Collector)(nil)
