package httpserver

import (
	"net/http"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/ringloop/ringloop/internal/timers"
)

// Request metrics: every server counts its responses by status class and
// times its handlers in a histogram of fixed buckets, always (Server.Stats
// reads them; package github.com/ringloop/ringloop/metrics exports them to
// Prometheus). Counting costs two clock reads and three atomic adds per
// request, no allocation: the counters are spread over stripes, each on its
// own cache lines, picked from the connection's (fast API) or the request's
// (adapter) address, so the loops of a group seldom write the same line.
//
// What is measured is the handler: from the call of ServeRing or ServeHTTP
// to its return, as Prometheus's promhttp.InstrumentHandlerDuration does; the
// status is the one the response went out with (200 when the handler set
// none). A response the handler Defers is counted when the handler returns,
// with the status set when it called Defer. A connection taken by Hijack is counted
// apart (Hijacked). Requests the server refuses before any handler runs
// (malformed, over a limit) and handlers that panic are not counted.

// DurationBuckets are the upper bounds of the request-duration histogram
// (Prometheus's "le"), from 100 µs to 10 s; a last, implicit bucket holds the
// longer ones.
var DurationBuckets = [...]time.Duration{
	100 * time.Microsecond, 250 * time.Microsecond, 500 * time.Microsecond,
	time.Millisecond, 2500 * time.Microsecond, 5 * time.Millisecond,
	10 * time.Millisecond, 25 * time.Millisecond, 50 * time.Millisecond,
	100 * time.Millisecond, 250 * time.Millisecond, 500 * time.Millisecond,
	time.Second, 2500 * time.Millisecond, 5 * time.Second, 10 * time.Second,
}

// Stats is a snapshot of a server's request metrics since it was built.
type Stats struct {
	// Responses counts the responses by status class: [0] 1xx (an
	// Upgrade's 101), [1] 2xx, [2] 3xx, [3] 4xx, [4] 5xx.
	Responses [5]uint64
	// Hijacked counts the adapter's requests whose handler took the
	// connection (Hijack): what it answered is its own.
	Hijacked uint64
	// Requests is how many requests were timed (all of the above).
	Requests uint64
	// Duration is the handlers' total time.
	Duration time.Duration
	// Buckets counts the requests by duration: Buckets[i] those that took
	// at most DurationBuckets[i] and more than DurationBuckets[i-1] (not
	// cumulative); the last one those over the last bound.
	Buckets [len(DurationBuckets) + 1]uint64
}

// StatusClasses names Stats.Responses' classes, for labels.
var StatusClasses = [5]string{"1xx", "2xx", "3xx", "4xx", "5xx"}

// Stats returns the server's request metrics; cheap, from any goroutine.
func (s *Server) Stats() Stats {
	var st Stats
	m := s.requestMetrics()
	if m == nil {
		return st
	}
	for i := range m.stripes {
		sh := &m.stripes[i]
		for j := range st.Responses {
			st.Responses[j] += sh.classes[j].Load()
		}
		st.Hijacked += sh.hijacked.Load()
		st.Duration += time.Duration(sh.nanos.Load())
		for j := range st.Buckets {
			st.Buckets[j] += sh.buckets[j].Load()
		}
	}
	for _, n := range st.Buckets {
		st.Requests += n
	}
	return st
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
	buckets  [len(DurationBuckets) + 1]atomic.Uint64
	_        [64]byte // the next stripe starts on another cache line
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
	for i < len(DurationBuckets) && time.Duration(d) > DurationBuckets[i] {
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

func (c *countedFast) ServeRing(w *Response, r *Request) {
	start := timers.Now()
	c.h.ServeRing(w, r)
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
