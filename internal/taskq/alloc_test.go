package taskq

import (
	"testing"

	"github.com/ringloop/ringloop/tasks"
)

// Pre-built tasks and Func values travel through every queue without a
// single allocation in steady state.
func TestZeroAllocs(t *testing.T) {
	x := &item{}
	f := func() {}
	queues := map[string]Queue{
		"bounded":   NewBounded(64),
		"unbounded": NewUnbounded(16),
		"chunked":   NewQueue(1 << 20),
	}
	for name, q := range queues {
		// warm up: let the unbounded queue link and recycle its chunks
		for range 100 {
			for range 20 {
				q.Offer(x)
			}
			DrainAll(q, nil)
		}
		allocs := testing.AllocsPerRun(200, func() {
			for range 20 {
				q.Offer(x)
				q.Offer(tasks.Func(f))
			}
			for q.Poll() != nil {
			}
		})
		eq(t, allocs, 0.0, name+": allocations per 40 offers and polls")
	}
}
