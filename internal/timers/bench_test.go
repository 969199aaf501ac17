package timers

import (
	"container/heap"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/ringloop/ringloop/tasks"
)

// Benchmarks compare three designs in one run:
//
//   - wheel: this package (hierarchical hashed wheel + exact heap), with a
//     fake clock standing still or advancing per op;
//   - netty: Netty's design in Go, a container/heap binary heap of tasks that
//     store their index, ordered by (deadline, sequence);
//   - runtime: time.AfterFunc / Stop / Reset (real clock).
//
// Each runs with 10^3 and 10^6 other timers pending (deadlines spread over an
// hour) and reports B/pending: heap bytes per pending timer, the timer
// struct included, the task (shared) excluded.

// ---- Netty's design, for comparison ----

type nettyTask struct {
	deadline int64
	seq      uint64
	index    int
	task     tasks.Task
}

type nettyHeap struct {
	q   []*nettyTask
	seq uint64
}

func (h *nettyHeap) Len() int { return len(h.q) }
func (h *nettyHeap) Less(i, j int) bool {
	a, b := h.q[i], h.q[j]
	return a.deadline < b.deadline || (a.deadline == b.deadline && a.seq < b.seq)
}
func (h *nettyHeap) Swap(i, j int) {
	h.q[i], h.q[j] = h.q[j], h.q[i]
	h.q[i].index = i
	h.q[j].index = j
}
func (h *nettyHeap) Push(x any) {
	t := x.(*nettyTask)
	t.index = len(h.q)
	h.q = append(h.q, t)
}
func (h *nettyHeap) Pop() any {
	n := len(h.q) - 1
	t := h.q[n]
	h.q[n] = nil
	h.q = h.q[:n]
	t.index = -1
	return t
}

func (h *nettyHeap) schedule(t *nettyTask, deadline int64) {
	h.seq++
	t.deadline, t.seq = deadline, h.seq
	heap.Push(h, t)
}

func (h *nettyHeap) cancel(t *nettyTask) { heap.Remove(h, t.index) }

func (h *nettyHeap) reset(t *nettyTask, deadline int64) {
	h.seq++
	t.deadline, t.seq = deadline, h.seq
	heap.Fix(h, t.index)
}

func (h *nettyHeap) pollDue(now int64, fn func(tasks.Task)) {
	for len(h.q) > 0 && h.q[0].deadline <= now {
		fn(heap.Pop(h).(*nettyTask).task)
	}
}

// ---- fixtures ----

var benchSizes = []int{1_000, 1_000_000}

var nopTask tasks.Task = tasks.Func(func() {})

// pendingDeadlines returns n deadlines spread over [1 s, 1 h + 1 s).
func pendingDeadlines(n int) []int64 {
	r := rand.New(rand.NewPCG(1, 2))
	ds := make([]int64, n)
	for i := range ds {
		ds[i] = int64(time.Second) + r.Int64N(int64(time.Hour))
	}
	return ds
}

// opDelays is a table of op delays in [1 s, 60 s): request and read timeouts.
var opDelays = func() []time.Duration {
	r := rand.New(rand.NewPCG(3, 4))
	ds := make([]time.Duration, 4096)
	for i := range ds {
		ds[i] = time.Second + time.Duration(r.Int64N(int64(59*time.Second)))
	}
	return ds
}()

// randIndexes is a table of random indexes in [0, n).
func randIndexes(n int) []int32 {
	r := rand.New(rand.NewPCG(5, 6))
	ix := make([]int32, 1<<16)
	for i := range ix {
		ix[i] = int32(r.IntN(n))
	}
	return ix
}

func heapBytes() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

type wheelFix struct {
	h        *Heap
	timers   []Timer
	bytesPer float64
}

func newWheelFix(b *testing.B, n int) *wheelFix {
	ds := pendingDeadlines(n)
	before := heapBytes()
	f := &wheelFix{h: NewHeap(nil), timers: make([]Timer, n)}
	f.h.SetClock(func() int64 { return 0 })
	for i := range f.timers {
		f.timers[i].Init(nopTask)
		f.h.Start(&f.timers[i], ds[i])
	}
	f.bytesPer = float64(heapBytes()-before) / float64(n)
	runtime.KeepAlive(ds) // measured before ds is freed
	return f
}

type nettyFix struct {
	h        *nettyHeap
	tasks    []nettyTask
	bytesPer float64
}

func newNettyFix(b *testing.B, n int) *nettyFix {
	ds := pendingDeadlines(n)
	before := heapBytes()
	f := &nettyFix{h: &nettyHeap{}, tasks: make([]nettyTask, n)}
	for i := range f.tasks {
		f.tasks[i].task = nopTask
		f.h.schedule(&f.tasks[i], ds[i])
	}
	f.bytesPer = float64(heapBytes()-before) / float64(n)
	runtime.KeepAlive(ds) // measured before ds is freed
	return f
}

type runtimeFix struct {
	timers   []*time.Timer
	bytesPer float64
}

func newRuntimeFix(b *testing.B, n int) *runtimeFix {
	ds := pendingDeadlines(n)
	before := heapBytes()
	f := &runtimeFix{timers: make([]*time.Timer, n)}
	fn := func() {}
	for i := range f.timers {
		f.timers[i] = time.AfterFunc(time.Duration(ds[i]), fn)
	}
	f.bytesPer = float64(heapBytes()-before) / float64(n)
	runtime.KeepAlive(ds) // measured before ds is freed
	return f
}

// done stops the pending timers and reports B/pending; b.Loop drops metrics
// reported before it starts.
func (f *runtimeFix) done(b *testing.B) {
	for _, t := range f.timers {
		t.Stop()
	}
	b.ReportMetric(f.bytesPer, "B/pending")
}

func (f *wheelFix) done(b *testing.B) { b.ReportMetric(f.bytesPer, "B/pending") }
func (f *nettyFix) done(b *testing.B) { b.ReportMetric(f.bytesPer, "B/pending") }

// BenchmarkScheduleCancel arms a timer 1-60 s out and cancels it at once:
// a request timeout whose response came in time.
func BenchmarkScheduleCancel(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("wheel/pending=%d", n), func(b *testing.B) {
			f := newWheelFix(b, n)
			defer f.done(b)
			var t Timer
			t.Init(nopTask)
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				f.h.Start(&t, int64(opDelays[i&4095]))
				f.h.Stop(&t)
				i++
			}
		})
		b.Run(fmt.Sprintf("wheel-scheduled/pending=%d", n), func(b *testing.B) {
			f := newWheelFix(b, n)
			defer f.done(b)
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				f.h.Schedule(nopTask, opDelays[i&4095]).Cancel()
				i++
			}
		})
		b.Run(fmt.Sprintf("netty/pending=%d", n), func(b *testing.B) {
			f := newNettyFix(b, n)
			defer f.done(b)
			t := &nettyTask{task: nopTask}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				f.h.schedule(t, int64(opDelays[i&4095]))
				f.h.cancel(t)
				i++
			}
		})
		b.Run(fmt.Sprintf("runtime/pending=%d", n), func(b *testing.B) {
			f := newRuntimeFix(b, n)
			defer f.done(b)
			fn := func() {}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				time.AfterFunc(opDelays[i&4095], fn).Stop()
				i++
			}
		})
	}
}

// BenchmarkChurn cancels a random pending timer and arms it again 1-60 s
// out: connections closing and opening.
func BenchmarkChurn(b *testing.B) {
	for _, n := range benchSizes {
		ix := randIndexes(n)
		b.Run(fmt.Sprintf("wheel/pending=%d", n), func(b *testing.B) {
			f := newWheelFix(b, n)
			defer f.done(b)
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				t := &f.timers[ix[i&0xffff]]
				f.h.Stop(t)
				f.h.Start(t, int64(opDelays[i&4095]))
				i++
			}
		})
		b.Run(fmt.Sprintf("netty/pending=%d", n), func(b *testing.B) {
			f := newNettyFix(b, n)
			defer f.done(b)
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				t := &f.tasks[ix[i&0xffff]]
				f.h.cancel(t)
				f.h.schedule(t, int64(opDelays[i&4095]))
				i++
			}
		})
		b.Run(fmt.Sprintf("runtime/pending=%d", n), func(b *testing.B) {
			f := newRuntimeFix(b, n)
			defer f.done(b)
			fn := func() {}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				j := ix[i&0xffff]
				f.timers[j].Stop()
				f.timers[j] = time.AfterFunc(opDelays[i&4095], fn)
				i++
			}
		})
	}
}

// BenchmarkReset pushes a random pending timer's deadline to now+30 s while
// the clock advances 100 ns per op: an idle timeout reset on every read.
func BenchmarkReset(b *testing.B) {
	const step = 100
	for _, n := range benchSizes {
		ix := randIndexes(n)
		b.Run(fmt.Sprintf("wheel/pending=%d", n), func(b *testing.B) {
			f := newWheelFix(b, n)
			defer f.done(b)
			b.ReportAllocs()
			now, i := int64(0), 0
			for b.Loop() {
				now += step
				f.h.Start(&f.timers[ix[i&0xffff]], now+int64(30*time.Second))
				if i&1023 == 0 {
					f.h.PollDue(now, func(tasks.Task) {})
				}
				i++
			}
		})
		b.Run(fmt.Sprintf("netty/pending=%d", n), func(b *testing.B) {
			f := newNettyFix(b, n)
			defer f.done(b)
			b.ReportAllocs()
			now, i := int64(0), 0
			for b.Loop() {
				now += step
				f.h.reset(&f.tasks[ix[i&0xffff]], now+int64(30*time.Second))
				if i&1023 == 0 {
					f.h.pollDue(now, func(tasks.Task) {})
				}
				i++
			}
		})
		b.Run(fmt.Sprintf("runtime/pending=%d", n), func(b *testing.B) {
			f := newRuntimeFix(b, n)
			defer f.done(b)
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				f.timers[ix[i&0xffff]].Reset(30 * time.Second)
				i++
			}
		})
	}
}

// BenchmarkScheduleFire arms timers 51.2 ms out while the clock advances
// 50 µs per op, so one timer fires per op in steady state.
func BenchmarkScheduleFire(b *testing.B) {
	const ring, step = 1024, 50_000
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("wheel/pending=%d", n), func(b *testing.B) {
			f := newWheelFix(b, n)
			defer f.done(b)
			ts := make([]Timer, ring)
			fired := 0
			count := func(tasks.Task) { fired++ }
			for i := range ts {
				ts[i].Init(nopTask)
			}
			b.ReportAllocs()
			now, i := int64(0), 0
			for b.Loop() {
				now += step
				f.h.PollDue(now, count)
				f.h.Start(&ts[i%ring], now+ring*step)
				i++
			}
			if i > 2*ring && fired < i-ring-1 {
				b.Fatalf("fired %d of %d", fired, i)
			}
		})
		b.Run(fmt.Sprintf("netty/pending=%d", n), func(b *testing.B) {
			f := newNettyFix(b, n)
			defer f.done(b)
			ts := make([]nettyTask, ring)
			fired := 0
			count := func(tasks.Task) { fired++ }
			for i := range ts {
				ts[i].task = nopTask
			}
			b.ReportAllocs()
			now, i := int64(0), 0
			for b.Loop() {
				now += step
				f.h.pollDue(now, count)
				f.h.schedule(&ts[i%ring], now+ring*step)
				i++
			}
			if i > 2*ring && fired < i-ring-1 {
				b.Fatalf("fired %d of %d", fired, i)
			}
		})
		b.Run(fmt.Sprintf("runtime/pending=%d", n), func(b *testing.B) {
			// Real time: arm batches of timers 0-100 µs out and wait for
			// them; AfterFunc runs each callback in its own goroutine.
			f := newRuntimeFix(b, n)
			defer f.done(b)
			var wg sync.WaitGroup
			done := func() { wg.Done() }
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				wg.Add(1)
				time.AfterFunc(time.Duration(i%100)*time.Microsecond, done)
				i++
				if i%ring == 0 {
					wg.Wait()
				}
			}
			wg.Wait()
		})
	}
}
