package timers

import (
	"math"
	"runtime"
	"slices"
	"testing"
	"time"
	"unsafe"
	"weak"

	"github.com/ringloop/ringloop/tasks"
)

func TestDeadlineAfter(t *testing.T) {
	equal(t, int64(100), DeadlineAfter(100, 0))
	equal(t, int64(100), DeadlineAfter(100, -time.Hour))
	equal(t, int64(100), DeadlineAfter(100, math.MinInt64))
	equal(t, int64(150), DeadlineAfter(100, 50))
	equal(t, Never, DeadlineAfter(100, math.MaxInt64))
	equal(t, Never, DeadlineAfter(math.MaxInt64-10, 11))
	equal(t, int64(math.MaxInt64-1), DeadlineAfter(math.MaxInt64-10, 9))
}

func TestNowIsMonotonicFromOrigin(t *testing.T) {
	a := Now()
	check(t, a >= int64(0))
	start := time.Now()
	for Now() == a {
		check(t, time.Since(start) < time.Second, "clock does not advance")
	}
	b := Now()
	check(t, b > a)
	before := time.Since(origin)
	now := time.Duration(Now())
	check(t, before <= now && now <= time.Since(origin), "Now is not the time since origin")
}

func TestNeverEarlyAndExactNextDeadline(t *testing.T) {
	h, _ := newTestHeap(nil)
	var tm Timer
	c := &counter{}
	tm.Init(c)
	const d = 5_000_001_234 // not on a tick boundary, several levels up
	h.Start(&tm, d)
	check(t, tm.Pending())
	equal(t, int64(d), tm.Deadline())
	got, ok := h.NextDeadline()
	check(t, ok)
	equal(t, int64(d), got, "NextDeadline must be exact")
	equal(t, 0, h.PollDue(d-1, runAll))
	equal(t, int64(0), c.n.Load())
	got, _ = h.NextDeadline()
	equal(t, int64(d), got)
	equal(t, 1, h.PollDue(d, runAll))
	equal(t, int64(1), c.n.Load())
	check(t, !tm.Pending())
	_, ok = h.NextDeadline()
	check(t, !ok)
	equal(t, 0, h.Len())
}

func TestEqualDeadlinesFireInSchedulingOrder(t *testing.T) {
	h, _ := newTestHeap(nil)
	ts := make([]Timer, 50)
	var order []int
	for i := range ts {
		ts[i].Init(&idTask{id: i})
	}
	for i := range ts {
		h.Start(&ts[i], 3_000_000_000)
	}
	// Re-arming counts as scheduling anew: 7 and 3 go to the back.
	h.Start(&ts[7], 3_000_000_000)
	h.Start(&ts[3], 3_000_000_000)
	n := h.PollDue(Never, func(tk tasks.Task) { order = append(order, tk.(*idTask).id) })
	equal(t, 50, n)
	want := []int{}
	for i := range 50 {
		if i != 7 && i != 3 {
			want = append(want, i)
		}
	}
	want = append(want, 7, 3)
	equal(t, want, order)
}

func TestStartMovesTimerEarlierAndLater(t *testing.T) {
	h, _ := newTestHeap(nil)
	var a, b Timer
	a.Init(&idTask{id: 1})
	b.Init(&idTask{id: 2})
	h.Start(&a, 10*int64(time.Second))
	h.Start(&b, 20*int64(time.Second))
	h.Start(&a, 30*int64(time.Second)) // later, in place
	d, _ := h.NextDeadline()
	equal(t, 20*int64(time.Second), d)
	h.Start(&a, 5*int64(time.Second)) // earlier, refiled
	d, _ = h.NextDeadline()
	equal(t, 5*int64(time.Second), d)
	h.Start(&a, 40*int64(time.Second)) // out of the exact heap
	d, _ = h.NextDeadline()
	equal(t, 20*int64(time.Second), d)
	equal(t, 2, h.Len())
	var fired []int
	h.PollDue(Never, func(tk tasks.Task) { fired = append(fired, tk.(*idTask).id) })
	equal(t, []int{2, 1}, fired)
}

func TestTimerFitsInAFewWords(t *testing.T) {
	// The per-timer memory goal: under 64 bytes beyond the task.
	check(t, unsafe.Sizeof(Timer{}) <= 56, unsafe.Sizeof(Timer{}))
}

func TestStopReportsPending(t *testing.T) {
	h, _ := newTestHeap(nil)
	var tm Timer
	tm.Init(&counter{})
	check(t, !h.Stop(&tm))
	h.Start(&tm, 1)
	check(t, h.Stop(&tm))
	check(t, !h.Stop(&tm))
	h.Start(&tm, int64(time.Hour))
	check(t, h.Stop(&tm))
	equal(t, 0, h.Len())
}

func TestPollDueSkipsTimersArmedDuringTheCall(t *testing.T) {
	h, _ := newTestHeap(nil)
	var a, b, c, late Timer
	var fired []string
	b.Init(tasks.Func(func() { fired = append(fired, "b") }))
	c.Init(tasks.Func(func() { fired = append(fired, "c") }))
	late.Init(tasks.Func(func() { fired = append(fired, "late") }))
	a.Init(tasks.Func(func() {
		fired = append(fired, "a")
		h.Start(&late, 0) // due, and earliest, but armed during the call
		h.Stop(&c)        // due, stopped before its turn
	}))
	h.Start(&a, 10)
	h.Start(&b, 20)
	h.Start(&c, 20)
	equal(t, 1, h.PollDue(100, runAll))
	equal(t, []string{"a"}, fired)
	// The next call continues in (deadline, sequence) order.
	equal(t, 2, h.PollDue(100, runAll))
	equal(t, []string{"a", "late", "b"}, fired)
	equal(t, 0, h.Len())
}

func TestPollDueFromItsCallbackPanics(t *testing.T) {
	h, _ := newTestHeap(nil)
	var tm Timer
	tm.Init(&counter{})
	h.Start(&tm, 0)
	equal(t, "timers: PollDue called from its own callback", panicValue(func() {
		h.PollDue(0, func(tasks.Task) { h.PollDue(0, runAll) })
	}))
	// The guard is released by the panic.
	var again Timer
	again.Init(&counter{})
	h.Start(&again, 0)
	equal(t, 1, h.PollDue(0, runAll))
}

func TestTimerReuseAllocatesNothing(t *testing.T) {
	h, clk := newTestHeap(nil)
	ts := make([]Timer, 64)
	c := &counter{}
	for i := range ts {
		ts[i].Init(c)
		h.Start(&ts[i], int64(i+1)*int64(time.Second))
	}
	var tm Timer
	tm.Init(c)
	now := int64(0)
	allocs := testing.AllocsPerRun(1000, func() {
		now += int64(time.Millisecond)
		clk.set(now)
		h.Start(&tm, now+int64(30*time.Second)) // arm
		h.Start(&tm, now+int64(31*time.Second)) // reset later
		h.Start(&tm, now+int64(time.Millisecond))
		h.Stop(&tm)
		h.Start(&tm, now)
		h.PollDue(now, runAll)
		h.NextDeadline()
	})
	check(t, allocs == 0)
	check(t, c.n.Load() > int64(1000))
}

func TestChurnLeavesNoGarbage(t *testing.T) {
	h, _ := newTestHeap(nil)
	ts := make([]Timer, 10_000)
	for i := range ts {
		ts[i].Init(&counter{})
	}
	for round := range 20 {
		for i := range ts {
			// Half in the current tick (exact heap), half in the wheel.
			d := int64(i%2) * int64(round+1) * int64(time.Second)
			h.Start(&ts[i], d)
		}
		equal(t, len(ts), h.Len())
		for i := range ts {
			check(t, h.Stop(&ts[i]))
		}
		equal(t, 0, h.Len())
	}
	check(t, h.wcount == 0)
	check(t, len(h.near) == 0)
	check(t, cap(h.near) <= 256*4, "exact heap keeps its burst capacity")
	for _, s := range h.slots {
		check(t, s == nil)
	}

	// A cancelled Scheduled is unreachable from the heap.
	s := h.Schedule(&counter{}, time.Hour)
	w := weak.Make(s)
	check(t, s.Cancel())
	s = nil
	waitFor(t, "cancelled Scheduled to be collected", func() bool { runtime.GC(); return w.Value() == nil })
}

func TestCursorAheadOfClock(t *testing.T) {
	// NextDeadline moves the cursor to the earliest timer; timers armed
	// before it afterwards are still exact and in order.
	h, _ := newTestHeap(nil)
	var far, mid, near Timer
	var fired []string
	far.Init(tasks.Func(func() { fired = append(fired, "far") }))
	mid.Init(tasks.Func(func() { fired = append(fired, "mid") }))
	near.Init(tasks.Func(func() { fired = append(fired, "near") }))
	h.Start(&far, int64(time.Minute))
	d, _ := h.NextDeadline()
	equal(t, int64(time.Minute), d)
	h.Start(&mid, int64(time.Second))
	h.Start(&near, 1)
	d, _ = h.NextDeadline()
	equal(t, int64(1), d)
	equal(t, 1, h.PollDue(int64(time.Millisecond), runAll))
	equal(t, 2, h.PollDue(int64(time.Hour), runAll))
	equal(t, []string{"near", "mid", "far"}, fired)
}

func TestSaturatedAndNegativeDeadlines(t *testing.T) {
	h, _ := newTestHeap(nil)
	var never, past Timer
	never.Init(&idTask{id: 1})
	past.Init(&idTask{id: 2})
	h.Start(&never, Never)
	h.Start(&past, -5)
	var fired []int
	collect := func(tk tasks.Task) { fired = append(fired, tk.(*idTask).id) }
	equal(t, 1, h.PollDue(0, collect))
	d, ok := h.NextDeadline()
	check(t, ok)
	equal(t, Never, d)
	equal(t, 0, h.PollDue(Never-1, collect))
	equal(t, 1, h.PollDue(Never, collect))
	equal(t, []int{2, 1}, fired)
}

func TestCancelAllStopsTimers(t *testing.T) {
	h, _ := newTestHeap(nil)
	ts := make([]Timer, 100)
	c := &counter{}
	for i := range ts {
		ts[i].Init(c)
		h.Start(&ts[i], int64(i)*int64(time.Second))
	}
	h.NextDeadline() // some in the exact heap, the rest in the wheel
	h.CancelAll()
	equal(t, 0, h.Len())
	for i := range ts {
		check(t, !ts[i].Pending())
		check(t, !h.Stop(&ts[i]))
	}
	equal(t, 0, h.PollDue(Never, runAll))
	check(t, c.n.Load() == 0)
	// Still usable.
	h.Start(&ts[0], 5)
	equal(t, 1, h.PollDue(5, runAll))
	equal(t, int64(1), c.n.Load())
}

func TestLevelsCoverTheInt64Range(t *testing.T) {
	// One timer per power of two from the cursor, fired in order.
	h, _ := newTestHeap(nil)
	ts := make([]Timer, 63)
	for i := range ts {
		ts[i].Init(&idTask{id: i})
		h.Start(&ts[i], DeadlineAfter(0, time.Duration(1)<<i))
	}
	var fired []int
	for {
		d, ok := h.NextDeadline()
		if !ok {
			break
		}
		h.PollDue(d, func(tk tasks.Task) { fired = append(fired, tk.(*idTask).id) })
	}
	want := make([]int, 63)
	for i := range want {
		want[i] = i
	}
	check(t, slices.Equal(want, fired), "%v", fired)
}
