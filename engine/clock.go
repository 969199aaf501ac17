package engine

import (
	"sync/atomic"

	"github.com/ringloop/ringloop/internal/timers"
)

// testClock, set only by tests (export_test.go), replaces the loop's clock so
// that time-budget logic can be checked without reading wall time.
var testClock atomic.Pointer[func() int64]

func now() int64 {
	if c := testClock.Load(); c != nil {
		return (*c)()
	}
	return timers.Now()
}
