package timers_test

import (
	"fmt"
	"time"

	"github.com/ringloop/ringloop/internal/timers"
	"github.com/ringloop/ringloop/tasks"
)

// A loop owns one Heap. It asks NextDeadline how long it may block, then
// hands due timers to its task run with PollDue. A fake clock keeps the
// example deterministic.
func Example() {
	now := int64(0)
	h := timers.NewHeap(nil) // nil owner: single goroutine
	h.SetClock(func() int64 { return now })

	say := func(s string) tasks.Task { return tasks.Func(func() { fmt.Println(now/1e6, "ms:", s) }) }
	h.Schedule(say("second (20 ms, scheduled before third)"), 20*time.Millisecond)
	h.Schedule(say("first"), 10*time.Millisecond)
	h.Schedule(say("third"), 20*time.Millisecond)
	tick := h.ScheduleAtFixedRate(say("tick"), 15*time.Millisecond, 15*time.Millisecond)

	// An idle timeout embedded in a connection, pushed back on every read.
	var idle timers.Timer
	idle.Init(say("idle timeout"))
	h.Start(&idle, timers.DeadlineAfter(now, 25*time.Millisecond))
	h.Start(&idle, timers.DeadlineAfter(now, 40*time.Millisecond)) // a read came in

	for {
		d, ok := h.NextDeadline()
		if !ok || d > 50e6 {
			break
		}
		now = d // block until exactly then
		h.PollDue(now, func(t tasks.Task) { t.Run() })
	}
	tick.Cancel()
	fmt.Println("pending:", h.Len())
	// Output:
	// 10 ms: first
	// 15 ms: tick
	// 20 ms: second (20 ms, scheduled before third)
	// 20 ms: third
	// 30 ms: tick
	// 40 ms: idle timeout
	// 45 ms: tick
	// pending: 0
}
