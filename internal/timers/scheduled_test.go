package timers

import (
	"context"
	"errors"
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ringloop/ringloop/tasks"
)

const ms = int64(time.Millisecond)

func TestScheduleOneShot(t *testing.T) {
	h, clk := newTestHeap(nil)
	clk.set(1000)
	c := &counter{}
	s := h.Schedule(c, 10*time.Millisecond)
	equal(t, OneShot, s.Kind())
	equal(t, 1000+10*ms, s.Deadline())
	equal(t, 10*time.Millisecond, s.Delay())
	clk.add(4 * ms)
	equal(t, 6*time.Millisecond, s.Delay())
	check(t, !s.IsDone())
	_, done, _ := s.Poll()
	check(t, !done)
	d, ok := h.NextDeadline()
	check(t, ok)
	equal(t, 1000+10*ms, d)

	equal(t, 0, h.PollDue(1000+10*ms-1, runAll))
	equal(t, 1, h.PollDue(1000+10*ms, runAll))
	equal(t, int64(1), c.n.Load())
	check(t, s.IsDone())
	check(t, !s.IsCancelled())
	check(t, s.Err() == nil)
	_, err := s.Await(context.Background())
	check(t, err == nil)
	check(t, !s.Cancel(), "a finished task cannot be cancelled")
	clk.add(time.Hour.Nanoseconds())
	equal(t, time.Duration(0), s.Delay())
	equal(t, 0, h.Len())
}

func TestScheduleNegativeDelayIsDueAtOnce(t *testing.T) {
	h, clk := newTestHeap(nil)
	clk.set(500)
	c := &counter{}
	s := h.Schedule(c, -time.Second)
	equal(t, int64(500), s.Deadline())
	equal(t, 1, h.PollDue(500, runAll))
	s = h.Schedule(c, time.Duration(math.MaxInt64))
	equal(t, Never, s.Deadline(), "saturates")
	equal(t, 1, h.Len())
}

func TestFixedRateCatchesUp(t *testing.T) {
	h, clk := newTestHeap(nil)
	var runs []int64
	var s *Scheduled
	s = h.ScheduleAtFixedRate(tasks.Func(func() { runs = append(runs, s.Deadline()) }), 10*time.Millisecond, 10*time.Millisecond)
	equal(t, FixedRate, s.Kind())
	equal(t, 10*time.Millisecond, s.Period())
	clk.set(10 * ms)
	equal(t, 1, h.PollDue(clk.now(), runAll))
	equal(t, []int64{10 * ms}, runs)
	equal(t, 20*ms, s.Deadline())
	// Stall: the loop comes back at 45 ms. Each PollDue runs the task once
	// (a re-arm during the call waits for the next call) until caught up.
	clk.set(45 * ms)
	for range 3 {
		equal(t, 1, h.PollDue(clk.now(), runAll))
	}
	equal(t, 0, h.PollDue(clk.now(), runAll))
	equal(t, []int64{10 * ms, 20 * ms, 30 * ms, 40 * ms}, runs)
	d, _ := h.NextDeadline()
	equal(t, 50*ms, d)
	check(t, !s.IsDone(), "a periodic future stays pending")
	check(t, s.Cancel())
	check(t, s.IsCancelled() && s.IsDone())
	check(t, errors.Is(s.Err(), tasks.ErrCancelled))
	equal(t, 0, h.Len())
}

func TestFixedDelayCountsFromEndOfRun(t *testing.T) {
	h, clk := newTestHeap(nil)
	var starts []int64
	s := h.ScheduleWithFixedDelay(tasks.Func(func() {
		starts = append(starts, clk.now())
		clk.add(3 * ms) // the run takes 3 ms
	}), 5*time.Millisecond, 10*time.Millisecond)
	equal(t, FixedDelay, s.Kind())
	for range 3 {
		d, ok := h.NextDeadline()
		check(t, ok)
		clk.set(d)
		equal(t, 1, h.PollDue(d, runAll))
	}
	equal(t, []int64{5 * ms, 18 * ms, 31 * ms}, starts)
	equal(t, 44*ms, s.Deadline())
	// A late loop does not make it catch up: one run, then delay again.
	clk.set(100 * ms)
	equal(t, 1, h.PollDue(clk.now(), runAll))
	equal(t, 113*ms, s.Deadline())
}

func TestPeriodicPanicStopsAndFailsFuture(t *testing.T) {
	for _, kind := range []Kind{OneShot, FixedRate, FixedDelay} {
		t.Run(kind.String(), func(t *testing.T) {
			h, clk := newTestHeap(nil)
			n := 0
			boom := errors.New("boom")
			s := NewScheduled(h, tasks.Func(func() {
				n++
				if n == 2 || kind == OneShot {
					panic(boom)
				}
			}), time.Millisecond, time.Millisecond, kind)
			s.AddTask().Run()
			var listened atomic.Bool
			s.AddListener(tasks.Inline, func(f tasks.Future[struct{}]) {
				check(t, f == tasks.Future[struct{}](s), "listener sees the Scheduled")
				listened.Store(true)
			})
			var rePanicked any
			for i := 0; i < 5 && rePanicked == nil; i++ {
				clk.add(ms)
				rePanicked = panicValue(func() { h.PollDue(clk.now(), runAll) })
			}
			equal(t, boom, rePanicked, "the panic is re-raised with its value")
			var pe *tasks.PanicError
			check(t, errors.As(s.Err(), &pe), s.Err())
			equal(t, any(boom), pe.Value)
			check(t, errors.Is(s.Err(), boom))
			check(t, s.IsDone() && !s.IsCancelled() && listened.Load())
			check(t, !s.Cancel())
			// It does not repeat.
			runs := n
			clk.add(time.Second.Nanoseconds())
			equal(t, 0, h.PollDue(clk.now(), runAll))
			equal(t, runs, n)
			equal(t, 0, h.Len())
		})
	}
}

func TestGoexitFailsFutureWithoutPanic(t *testing.T) {
	h, _ := newTestHeap(nil)
	s := h.ScheduleAtFixedRate(tasks.Func(func() { panic("unused") }), 0, time.Second)
	// Run the runner in its own goroutine, replacing the task with one that
	// calls Goexit.
	s.task = tasks.Func(func() { runtimeGoexit() })
	done := make(chan struct{})
	go func() {
		defer close(done)
		h.PollDue(0, runAll)
	}()
	<-done
	check(t, s.IsDone())
	check(t, errors.Is(s.Err(), errGoexit), s.Err())
}

func TestCancelOnLoop(t *testing.T) {
	owner := &fakeLoop{}
	owner.onLoop.Store(true)
	h, _ := newTestHeap(owner)
	c := &counter{}
	s := h.Schedule(c, time.Second)
	keep := h.Schedule(c, 2*time.Second)
	var heard atomic.Int32
	s.AddListener(tasks.Inline, func(f tasks.Future[struct{}]) {
		check(t, f.IsCancelled())
		heard.Add(1)
	})
	equal(t, 2, h.Len())
	check(t, s.Cancel())
	check(t, !s.Cancel())
	equal(t, 1, h.Len(), "removed at once on the loop")
	equal(t, int32(1), heard.Load())
	check(t, s.IsCancelled() && s.IsDone())
	check(t, errors.Is(s.Err(), tasks.ErrCancelled))
	_, err := s.Await(context.Background())
	check(t, errors.Is(err, context.Canceled))
	equal(t, 0, owner.runQueued())
	equal(t, 1, h.PollDue(Never, runAll))
	equal(t, int64(1), c.n.Load())
	check(t, keep.IsDone())
}

func TestCancelFromAnotherGoroutineIsRoutedToOwner(t *testing.T) {
	owner := &fakeLoop{}
	h, _ := newTestHeap(owner)
	c := &counter{}
	s := h.Schedule(c, time.Second)
	var ok bool
	done := make(chan struct{})
	go func() { ok = s.Cancel(); close(done) }()
	<-done
	check(t, ok)
	check(t, s.IsCancelled() && s.IsDone(), "visible at once")
	equal(t, 1, h.Len(), "the heap is not touched off the loop")
	equal(t, 1, owner.runQueued())
	equal(t, 0, h.Len())
	_, ok2 := h.NextDeadline()
	check(t, !ok2)
}

func TestCancelWithRejectingOwnerIsDroppedLater(t *testing.T) {
	owner := &fakeLoop{}
	owner.reject.Store(true)
	h, _ := newTestHeap(owner)
	c := &counter{}
	a := h.Schedule(c, time.Millisecond)
	b := h.Schedule(c, 2*time.Millisecond)
	x := h.Schedule(c, time.Hour)
	check(t, a.Cancel() && x.Cancel())
	equal(t, 3, h.Len())
	// NextDeadline drops cancelled entries at the front.
	d, ok := h.NextDeadline()
	check(t, ok)
	equal(t, b.Deadline(), d)
	equal(t, 2, h.Len())
	// PollDue drops them without handing them out.
	check(t, x.Deadline() > 0)
	h.Start(&x.timer, 2*ms) // put x among the due entries (loop-side access)
	equal(t, 1, h.PollDue(2*ms, runAll))
	equal(t, int64(1), c.n.Load())
	equal(t, 0, h.Len())
	y := h.Schedule(c, time.Hour)
	check(t, y.Cancel())
	equal(t, 1, h.Len())
	h.CancelAll()
	equal(t, 0, h.Len())
	equal(t, int64(1), c.n.Load())
}

func TestNewScheduledThenAddTask(t *testing.T) {
	owner := &fakeLoop{}
	h, clk := newTestHeap(owner)
	clk.set(7 * ms)
	c := &counter{}
	var s *Scheduled
	done := make(chan struct{})
	go func() {
		// A foreign goroutine creates the task and hands the insertion
		// to the loop.
		s = NewScheduled(h, c, 3*time.Millisecond, 0, OneShot)
		if err := owner.Execute(s.AddTask()); err != nil {
			s.Fail(err)
		}
		close(done)
	}()
	<-done
	equal(t, 0, h.Len())
	equal(t, 10*ms, s.Deadline(), "deadline measured at creation")
	equal(t, 1, owner.runQueued())
	equal(t, 1, h.Len())
	s.AddTask().Run() // a second insertion is ignored
	equal(t, 1, h.Len())
	equal(t, 1, h.PollDue(10*ms, runAll))
	check(t, s.IsDone() && s.Err() == nil)

	// Cancelled before the loop inserts it: never armed.
	s2 := NewScheduled(h, c, 0, 0, OneShot)
	check(t, s2.Cancel())
	_ = owner.Execute(s2.AddTask())
	owner.runQueued()
	equal(t, 0, h.Len())

	// Rejected by the owner: the future fails with the owner's error.
	owner.reject.Store(true)
	s3 := NewScheduled(h, c, 0, 0, OneShot)
	if err := owner.Execute(s3.AddTask()); err != nil {
		check(t, s3.Fail(err))
	}
	check(t, errors.Is(s3.Err(), tasks.ErrShutdown))
	check(t, !s3.Fail(errors.New("again")))
	check(t, !s3.Cancel())
}

func TestRunningOneShotIsUncancellablePeriodicIsNot(t *testing.T) {
	h, clk := newTestHeap(nil)
	var one, per *Scheduled
	var oneCancel, perCancel bool
	one = h.Schedule(tasks.Func(func() { oneCancel = one.Cancel() }), 0)
	per = h.ScheduleAtFixedRate(tasks.Func(func() { perCancel = per.Cancel() }), 0, time.Millisecond)
	equal(t, 2, h.PollDue(0, runAll))
	check(t, !oneCancel, "running one-shot cancelled")
	check(t, one.IsDone() && !one.IsCancelled() && one.Err() == nil)
	check(t, perCancel, "running periodic not cancelled")
	check(t, per.IsCancelled())
	clk.add(time.Second.Nanoseconds())
	equal(t, 0, h.PollDue(clk.now(), runAll), "cancelled periodic repeated")
	equal(t, 0, h.Len())
}

func TestCancelAllCancelsFutures(t *testing.T) {
	h, _ := newTestHeap(nil)
	c := &counter{}
	var ss []*Scheduled
	for i := range 100 {
		ss = append(ss, h.Schedule(c, time.Duration(i)*time.Second))
		ss = append(ss, h.ScheduleWithFixedDelay(c, time.Duration(i)*time.Millisecond, time.Second))
	}
	var tm Timer
	tm.Init(c)
	h.Start(&tm, 42)
	h.NextDeadline()
	h.CancelAll()
	equal(t, 0, h.Len())
	check(t, !tm.Pending())
	for _, s := range ss {
		check(t, s.IsCancelled() && errors.Is(s.Err(), tasks.ErrCancelled))
		check(t, !s.Cancel())
	}
	equal(t, 0, h.PollDue(Never, runAll))
	equal(t, int64(0), c.n.Load())
}

func TestNewScheduledValidates(t *testing.T) {
	h, _ := newTestHeap(nil)
	c := &counter{}
	check(t, panicValue(func() { NewScheduled(h, nil, 0, 0, OneShot) }) != nil, "nil task")
	check(t, panicValue(func() { h.ScheduleAtFixedRate(c, 0, 0) }) != nil, "zero period")
	check(t, panicValue(func() { h.ScheduleWithFixedDelay(c, 0, -time.Second) }) != nil, "negative delay")
	check(t, panicValue(func() { NewScheduled(h, c, 0, time.Second, Kind(9)) }) != nil, "bad kind")
	equal(t, "Kind(9)", Kind(9).String())
	s := NewScheduled(h, c, 0, time.Second, OneShot)
	equal(t, time.Duration(0), s.Period(), "one-shot ignores period")
	equal(t, 0, h.Len())
}

// TestConcurrentCancelStress runs a real loop goroutine owning the heap while
// other goroutines schedule (NewScheduled + AddTask) and cancel. Every
// one-shot either runs exactly once or is cancelled, never both; every
// cancelled entry leaves the heap.
func TestConcurrentCancelStress(t *testing.T) {
	goroutines := runtime.NumGoroutine()
	loop := newTestLoop()
	h, clk := newTestHeap(loop)
	loop.h = h
	loop.clk = clk
	go loop.run()

	const perProc = 2000
	var wg sync.WaitGroup
	type rec struct {
		s        *Scheduled
		ran      atomic.Int32
		canceled bool
	}
	recs := make([][]*rec, stressProcs)
	for p := range stressProcs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range perProc {
				r := &rec{}
				kind := OneShot
				if i%5 == 0 {
					kind = FixedRate
				}
				r.s = NewScheduled(h, tasks.Func(func() { r.ran.Add(1) }), time.Duration(i%50)*time.Microsecond, time.Microsecond, kind)
				if err := loop.Execute(r.s.AddTask()); err != nil {
					t.Error(err)
					return
				}
				if i%3 == 0 || kind != OneShot {
					r.canceled = r.s.Cancel()
				}
				recs[p] = append(recs[p], r)
			}
		}()
	}
	wg.Wait()
	// Drain: let the loop's clock run past every deadline.
	loop.stopAt(Never)
	<-loop.done
	equal(t, 0, h.Len())
	waitFor(t, "goroutines to end", func() bool { return runtime.NumGoroutine() <= goroutines })
	for _, rs := range recs {
		for _, r := range rs {
			if r.s.Kind() != OneShot {
				check(t, r.canceled && r.s.IsCancelled(), "periodic not cancelled")
				continue
			}
			ran := r.ran.Load()
			if r.canceled {
				equal(t, int32(0), ran, "cancelled one-shot ran")
				check(t, r.s.IsCancelled())
			} else {
				equal(t, int32(1), ran, "one-shot did not run exactly once")
				check(t, r.s.IsDone() && r.s.Err() == nil)
			}
		}
	}
}

// testLoop is a minimal event loop: one goroutine owns the heap, runs queued
// tasks and due timers, and advances a fake clock by 10 µs per iteration.
type testLoop struct {
	mu   sync.Mutex
	q    []tasks.Task
	h    *Heap
	clk  *fakeClock
	end  atomic.Int64
	done chan struct{}
}

func newTestLoop() *testLoop {
	l := &testLoop{done: make(chan struct{})}
	l.end.Store(-1)
	return l
}

func (l *testLoop) Execute(t tasks.Task) error {
	l.mu.Lock()
	l.q = append(l.q, t)
	l.mu.Unlock()
	return nil
}

// InEventLoop is false for callers outside the loop goroutine: the loop
// goroutine never calls Cancel in this test, so routing always queues.
func (l *testLoop) InEventLoop() bool { return false }

func (l *testLoop) stopAt(v int64) { l.end.Store(v) }

func (l *testLoop) run() {
	defer close(l.done)
	for {
		l.mu.Lock()
		q := l.q
		l.q = nil
		l.mu.Unlock()
		for _, t := range q {
			t.Run()
		}
		l.clk.add(10_000)
		l.h.PollDue(l.clk.now(), runAll)
		if l.end.Load() == Never && len(q) == 0 {
			// Finish: fire or drop everything left, then stop.
			l.mu.Lock()
			empty := len(l.q) == 0
			l.mu.Unlock()
			if empty {
				for l.h.Len() > 0 {
					d, _ := l.h.NextDeadline()
					l.clk.set(max(d, l.clk.now()))
					l.h.PollDue(l.clk.now(), runAll)
					l.runQueuedNow()
				}
				if l.drained() {
					return
				}
			}
		}
	}
}

func (l *testLoop) runQueuedNow() {
	l.mu.Lock()
	q := l.q
	l.q = nil
	l.mu.Unlock()
	for _, t := range q {
		t.Run()
	}
}

func (l *testLoop) drained() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.q) == 0 && l.h.Len() == 0
}
