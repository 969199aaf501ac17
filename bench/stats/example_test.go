package stats_test

import (
	"fmt"
	"time"

	"github.com/ringloop/ringloop/bench/stats"
)

// Five rounds of one peer: the report quotes the median and the range.
func ExampleOf() {
	s := stats.Of([]float64{98e3, 91e3, 105e3, 89e3, 101e3})
	fmt.Printf("%.0f (%.0f–%.0f)\n", s.Median, s.Min, s.Max)
	// Output: 98000 (89000–105000)
}

func ExampleRecorder() {
	r := stats.NewRecorder()
	for i := 1; i <= 100; i++ {
		r.Record(time.Duration(i) * time.Microsecond)
	}
	l := r.Summary()
	fmt.Println(l.Count, l.P50, l.P99)
	// Output: 100 50 99
}
