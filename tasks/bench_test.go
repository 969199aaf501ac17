package tasks

import (
	"fmt"
	"runtime"
	"sync"
	"testing"
)

// benchTask is a pre-built task; only the consumer touches n.
type benchTask struct{ n int }

func (t *benchTask) Run() { t.n++ }

// mutexQueue is the baseline: a slice guarded by a mutex.
type mutexQueue struct {
	mu    sync.Mutex
	items []Task
	head  int
}

func (q *mutexQueue) Offer(t Task) bool {
	q.mu.Lock()
	q.items = append(q.items, t)
	q.mu.Unlock()
	return true
}

func (q *mutexQueue) Poll() Task {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.head == len(q.items) {
		q.items, q.head = q.items[:0], 0
		return nil
	}
	t := q.items[q.head]
	q.items[q.head] = nil
	q.head++
	return t
}

func (q *mutexQueue) Len() int { q.mu.Lock(); defer q.mu.Unlock(); return len(q.items) - q.head }
func (q *mutexQueue) Cap() int { return -1 }

// share splits b.N offers over the producers.
func share(n, producers, p int) int {
	k := n / producers
	if p == 0 {
		k += n % producers
	}
	return k
}

// benchQueue: producers offer b.N pre-built tasks in all, the benchmark
// goroutine polls and runs them (yielding when the queue is empty, as a
// loop would block). With backlog > 0, producers of an unbounded queue
// yield while more than backlog tasks are queued (checked every 64
// offers), the backpressure a bounded queue or channel applies by itself;
// without it the queue grows to b.N tasks and the benchmark measures the
// garbage collector scanning them.
func benchQueue(b *testing.B, producers int, q Queue, backlog int) {
	x := &benchTask{}
	b.ReportAllocs()
	b.ResetTimer()
	var wg sync.WaitGroup
	for p := range producers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range share(b.N, producers, p) {
				if backlog > 0 && i&63 == 0 {
					for q.Len() > backlog {
						runtime.Gosched()
					}
				}
				for !q.Offer(x) {
					runtime.Gosched()
				}
			}
		}()
	}
	for got := 0; got < b.N; {
		t := q.Poll()
		if t == nil {
			runtime.Gosched()
			continue
		}
		t.Run()
		got++
	}
	wg.Wait()
}

// benchChan is the same with a buffered chan func().
func benchChan(b *testing.B, producers int) {
	ch := make(chan func(), 1024)
	x := &benchTask{}
	f := x.Run
	b.ReportAllocs()
	b.ResetTimer()
	var wg sync.WaitGroup
	for p := range producers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range share(b.N, producers, p) {
				ch <- f
			}
		}()
	}
	for range b.N {
		(<-ch)()
	}
	wg.Wait()
}

// BenchmarkMPSC: offer+poll throughput with 1 and 4 producers, the queues
// of this package against a buffered channel and a mutex-guarded slice.
func BenchmarkMPSC(b *testing.B) {
	for _, producers := range []int{1, 4} {
		b.Run(fmt.Sprintf("P%d/bounded1024", producers), func(b *testing.B) {
			benchQueue(b, producers, NewBounded(1024), 0)
		})
		b.Run(fmt.Sprintf("P%d/unbounded-paced1024", producers), func(b *testing.B) {
			benchQueue(b, producers, NewUnbounded(0), 1024)
		})
		b.Run(fmt.Sprintf("P%d/unbounded-freerun", producers), func(b *testing.B) {
			benchQueue(b, producers, NewUnbounded(0), 0)
		})
		b.Run(fmt.Sprintf("P%d/chan1024", producers), func(b *testing.B) {
			benchChan(b, producers)
		})
		b.Run(fmt.Sprintf("P%d/mutex-slice", producers), func(b *testing.B) {
			benchQueue(b, producers, &mutexQueue{}, 1024)
		})
	}
}

// BenchmarkOfferPollSameGoroutine is the uncontended cost of one Offer and
// one Poll, as a loop scheduling work for itself.
func BenchmarkOfferPollSameGoroutine(b *testing.B) {
	for _, c := range []struct {
		name string
		q    Queue
	}{{"bounded", NewBounded(1024)}, {"unbounded", NewUnbounded(0)}} {
		b.Run(c.name, func(b *testing.B) {
			x := &benchTask{}
			b.ReportAllocs()
			for range b.N {
				c.q.Offer(x)
				c.q.Poll().Run()
			}
		})
	}
}

// BenchmarkPromise: a promise completed with one listener, without a waiter.
func BenchmarkPromise(b *testing.B) {
	b.ReportAllocs()
	fn := func(Future[int]) {}
	for range b.N {
		p := NewPromise[int](nil)
		p.AddListener(nil, fn)
		p.Succeed(1)
	}
}
