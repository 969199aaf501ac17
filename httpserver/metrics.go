package httpserver

import (
	"net/http"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/ringloop/ringloop/internal/timers"
)

// Request metrics: every server counts its responses by status class and
// times its handlers in a histogram of fixed buckets, always (Server.Metrics
// reads them; package github.com/ringloop/ringloop/metrics exports them to
// Prometheus). Counting costs two clock reads and three atomic adds per
// request, no allocation: the counters are spread over stripes, each on its
// own cache lines, picked from the connection's (fast API) or the request's
// (adapter) address, so the loops of a group seldom write the same line.
//
// What is measured is the handler: from the call of ServeFast or ServeHTTP
// to its return, as Prometheus's promhttp.InstrumentHandlerDuration does; the
// status is the one the response went out with (200 when the handler set
// none). A response the handler Defers is counted when the handler returns,
// with the status set when it called Defer. A connection taken by Hijack is counted
// apart (Hijacked). Requests the server refuses before any handler runs
// (malformed, over a limit) and handlers that panic are not counted.

// bucketBounds are the request-duration histogram's upper bounds
// (Metrics.BucketBounds).
var bucketBounds = [16]time.Duration{
	100 * time.Microsecond, 250 * time.Microsecond, 500 * time.Microsecond,
	time.Millisecond, 2500 * time.Microsecond, 5 * time.Millisecond,
	10 * time.Millisecond, 25 * time.Millisecond, 50 * time.Millisecond,
	100 * time.Millisecond, 250 * time.Millisecond, 500 * time.Millisecond,
	time.Second, 2500 * time.Millisecond, 5 * time.Second, 10 * time.Second,
}

// Metrics is a snapshot of a server's counters since it was built, as
// engine.Metrics is of a loop's.
type Metrics struct {
	Connections int           // connections open now (not those Hijack or Upgrade took)
	Requests    uint64        // requests timed: the sum of Responses and Hijacked
	Responses   [5]uint64     // responses by status class: [0] 1xx (an Upgrade's 101), [1] 2xx, [2] 3xx, [3] 4xx, [4] 5xx
	Hijacked    uint64        // adapter requests whose handler took the connection (Hijack): what it answered is its own
	HandlerTime time.Duration // the handlers' total time

	// Buckets counts the requests by their handler's time: Buckets[i]
	// those that took at most BucketBounds[i] and more than
	// BucketBounds[i-1] (not cumulative); the last one those over the
	// last bound.
	Buckets [17]uint64
	// BucketBounds are the histogram's upper bounds (Prometheus's "le"),
	// from 100 µs to 10 s, the same in every snapshot.
	BucketBounds [16]time.Duration
}

// Metrics returns the server's counters; cheap, from any goroutine.
func (s *Server) Metrics() Metrics {
	m := Metrics{Connections: int(s.live.Load()), BucketBounds: bucketBounds}
	rm := s.requestMetrics()
	if rm == nil {
		return m
	}
	for i := range rm.stripes {
		sh := &rm.stripes[i]
		for j := range m.Responses {
			m.Responses[j] += sh.classes[j].Load()
		}
		m.Hijacked += sh.hijacked.Load()
		m.HandlerTime += time.Duration(sh.nanos.Load())
		for j := range m.Buckets {
			m.Buckets[j] += sh.buckets[j].Load()
		}
	}
	for _, n := range m.Buckets {
		m.Requests += n
	}
	return m
}

const metricStripes = 8

// requestMetrics are a server's counters, in stripes.
type requestMetrics struct {
	stripes [metricStripes]metricStripe
}

type metricStripe struct {
	classes  [5]atomic.Uint64
	hijacked atomic.Uint64
	nanos    atomic.Uint64
	buckets  [len(Metrics{}.Buckets)]atomic.Uint64 // one per bound and one over the last
	_        [64]byte                              // the next stripe starts on another cache line
}

// observe counts one request served in d nanoseconds with status (0: the
// connection was hijacked); key picks the stripe.
func (m *requestMetrics) observe(key unsafe.Pointer, status int, d int64) {
	sh := &m.stripes[(uint64(uintptr(key))*0x9E3779B97F4A7C15)>>61]
	switch {
	case status == 0:
		sh.hijacked.Add(1)
	case status >= 100 && status < 600:
		sh.classes[status/100-1].Add(1)
	default:
		sh.classes[4].Add(1) // a nonstandard code over 599 counts as a server error
	}
	sh.nanos.Add(uint64(max(d, 0)))
	i := 0
	for i < len(bucketBounds) && time.Duration(d) > bucketBounds[i] {
		i++
	}
	sh.buckets[i].Add(1)
}

// counted wraps the server's handlers so that each request is counted: the
// one hook of these metrics in the server (newServer).
func counted(fast Handler, std http.Handler) (Handler, http.Handler) {
	m := new(requestMetrics)
	switch h := fast.(type) {
	case nil:
	case BodyStreamer:
		fast = &countedStreamer{countedFast{h, m}, h}
	default:
		fast = &countedFast{h, m}
	}
	if std != nil {
		std = &countedStd{std, m}
	}
	return fast, std
}

// requestMetrics returns the counters the server's handler wrapper holds.
func (s *Server) requestMetrics() *requestMetrics {
	switch h := s.fast.(type) {
	case *countedFast:
		return h.m
	case *countedStreamer:
		return h.m
	}
	if h, ok := s.std.(*countedStd); ok {
		return h.m
	}
	return nil
}

type countedFast struct {
	h Handler
	m *requestMetrics
}

func (c *countedFast) ServeFast(w *Response, r *Request) {
	start := timers.Now()
	c.h.ServeFast(w, r)
	// A Deferred response is counted now, with the status set when the
	// handler called Defer (w keeps it; the Deferred is another
	// goroutine's from then on).
	c.m.observe(unsafe.Pointer(r.conn), w.status, timers.Now()-start)
}

// countedStreamer keeps a BodyStreamer one.
type countedStreamer struct {
	countedFast
	s BodyStreamer
}

func (c *countedStreamer) StreamBody(r *Request) bool { return c.s.StreamBody(r) }

type countedStd struct {
	h http.Handler
	m *requestMetrics
}

func (c *countedStd) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := timers.Now()
	c.h.ServeHTTP(w, r)
	status := http.StatusOK // what a handler that wrote nothing sends
	if sw, ok := w.(*stdWriter); ok {
		switch {
		case sw.hijacked:
			status = 0
		case sw.status != 0:
			status = sw.status
		}
	}
	c.m.observe(unsafe.Pointer(r), status, timers.Now()-start)
}
