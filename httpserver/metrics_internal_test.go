package httpserver

import (
	"net/http"
	"testing"
	"time"
	"unsafe"
)

// TestRequestMetricsAllocFree: counting a request allocates nothing, in
// either API's wrapper, and lands in the bucket its duration says.
func TestRequestMetricsAllocFree(t *testing.T) {
	fast, std := counted(HandlerFunc(func(w *Response, r *Request) {}), http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	w, r := &Response{status: 404}, &Request{}
	if n := testing.AllocsPerRun(1000, func() { fast.ServeFast(w, r) }); n != 0 {
		t.Errorf("fast API: %v allocations per request", n)
	}
	sw, sr := &stdWriter{status: 503}, &http.Request{}
	if n := testing.AllocsPerRun(1000, func() { std.ServeHTTP(sw, sr) }); n != 0 {
		t.Errorf("adapter: %v allocations per request", n)
	}
	m := new(requestMetrics)
	m.observe(unsafe.Pointer(w), 200, int64(3*time.Millisecond))
	m.observe(unsafe.Pointer(w), 0, int64(time.Minute))
	s := &Server{fast: &countedFast{nil, m}}
	got := s.Metrics()
	if got.Buckets[5] != 1 || got.Buckets[len(got.BucketBounds)] != 1 || got.Hijacked != 1 || got.Responses[1] != 1 || got.Requests != 2 {
		t.Errorf("metrics %+v", got)
	}
}
