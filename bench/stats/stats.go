// Package stats holds the harness's arithmetic: latency percentiles from an
// HdrHistogram and the median and spread of repeated rounds.
package stats

import (
	"encoding/json"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Latency is a latency summary in microseconds.
type Latency struct {
	Count int64   `json:"count"`
	P50   float64 `json:"p50_us"`
	P90   float64 `json:"p90_us"`
	P99   float64 `json:"p99_us"`
	P999  float64 `json:"p999_us"`
	Max   float64 `json:"max_us"`
}

// Recorder collects latencies from many goroutines into one histogram
// (1 µs to 60 s, three significant digits). One shared histogram behind a
// mutex costs a few tens of nanoseconds per record and a fixed ~200 KB,
// where one histogram per connection would cost that per connection.
type Recorder struct {
	mu sync.Mutex
	h  *hdrhistogram.Histogram
}

// NewRecorder returns an empty recorder.
func NewRecorder() *Recorder {
	return &Recorder{h: hdrhistogram.New(1, 60_000_000, 3)}
}

// Record adds one latency; values outside the range are clamped into it.
func (r *Recorder) Record(d time.Duration) {
	us := d.Microseconds()
	us = max(us, 1)
	us = min(us, 60_000_000)
	r.mu.Lock()
	_ = r.h.RecordValue(us)
	r.mu.Unlock()
}

// Summary returns the percentiles recorded so far.
func (r *Recorder) Summary() Latency {
	r.mu.Lock()
	defer r.mu.Unlock()
	return Summarize(r.h)
}

// Summarize reads the percentiles of h (values in microseconds).
func Summarize(h *hdrhistogram.Histogram) Latency {
	if h.TotalCount() == 0 {
		return Latency{}
	}
	return Latency{
		Count: h.TotalCount(),
		P50:   float64(h.ValueAtQuantile(50)),
		P90:   float64(h.ValueAtQuantile(90)),
		P99:   float64(h.ValueAtQuantile(99)),
		P999:  float64(h.ValueAtQuantile(99.9)),
		Max:   float64(h.Max()),
	}
}

// Num is a figure that may be missing (NaN); JSON writes a missing one as
// null, which encoding/json cannot do for a NaN float64.
type Num float64

// MarshalJSON writes NaN as null.
func (n Num) MarshalJSON() ([]byte, error) {
	if math.IsNaN(float64(n)) || math.IsInf(float64(n), 0) {
		return []byte("null"), nil
	}
	return json.Marshal(float64(n))
}

// UnmarshalJSON reads null as NaN.
func (n *Num) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*n = Num(math.NaN())
		return nil
	}
	var f float64
	err := json.Unmarshal(b, &f)
	*n = Num(f)
	return err
}

// Spread is the median and range of one figure over rounds.
type Spread struct {
	Median Num   `json:"median"`
	Min    Num   `json:"min"`
	Max    Num   `json:"max"`
	Values []Num `json:"values"`
}

// Of summarizes the rounds in v, in the order measured. NaN values (a round
// that produced no figure) are left out; none at all gives NaN everywhere.
func Of(v []float64) Spread {
	var ok []float64
	for _, x := range v {
		if !math.IsNaN(x) {
			ok = append(ok, x)
		}
	}
	nan := Num(math.NaN())
	s := Spread{Median: nan, Min: nan, Max: nan, Values: make([]Num, len(v))}
	for i, x := range v {
		s.Values[i] = Num(x)
	}
	if len(ok) == 0 {
		return s
	}
	slices.Sort(ok)
	s.Min, s.Max = Num(ok[0]), Num(ok[len(ok)-1])
	if n := len(ok); n%2 == 1 {
		s.Median = Num(ok[n/2])
	} else {
		s.Median = Num((ok[n/2-1] + ok[n/2]) / 2)
	}
	return s
}

// Valid reports whether any round produced a figure.
func (s Spread) Valid() bool { return !math.IsNaN(float64(s.Median)) }
