package taskq

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/ringloop/ringloop/tasks"
)

// benchTask is a pre-built task; only the consumer touches n.
type benchTask struct{ n int }

func (t *benchTask) Run() { t.n++ }

// mutexQueue is the baseline: a slice guarded by a mutex.
type mutexQueue struct {
	mu    sync.Mutex
	items []tasks.Task
	head  int
}

func (q *mutexQueue) Offer(t tasks.Task) bool {
	q.mu.Lock()
	q.items = append(q.items, t)
	q.mu.Unlock()
	return true
}

func (q *mutexQueue) Poll() tasks.Task {
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

// benchQueue: producers offer b.N pre-built tasks in all; the benchmark
// goroutine polls and runs them. Both sides park instead of spinning, as a
// channel's do, so that on a small machine a waiting side does not take
// processor time from the other: the consumer parks when the queue is empty
// (woken with the protocol an event loop uses: a sleeping flag producers
// swap after offering), and a producer parks when the queue is full (woken
// by the consumer after its next Poll). With backlog > 0, "full" for an
// unbounded queue means more than backlog tasks queued (checked every 64
// offers), the backpressure a bounded queue or a channel applies by itself;
// with backlog 0 the queue grows to b.N tasks and the benchmark mostly
// measures the garbage collector scanning them.
func benchQueue(b *testing.B, producers int, q Queue, backlog int) {
	x := &benchTask{}
	var sleeping atomic.Bool
	var waiting atomic.Int32
	wake := make(chan struct{}, 1)
	space := make(chan struct{}, producers)
	// park waits until ok() holds, parking while it does not.
	park := func(ok func() bool) {
		for !ok() {
			waiting.Add(1)
			if !ok() {
				<-space
				waiting.Add(-1)
				continue
			}
			waiting.Add(-1)
			return
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	var wg sync.WaitGroup
	for p := range producers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range share(b.N, producers, p) {
				if backlog > 0 && i&63 == 0 && q.Len() > backlog {
					park(func() bool { return q.Len() <= backlog })
				}
				if !q.Offer(x) {
					park(func() bool { return q.Offer(x) })
				}
				if sleeping.Load() && sleeping.Swap(false) {
					select {
					case wake <- struct{}{}:
					default:
					}
				}
			}
		}()
	}
	for got := 0; got < b.N; {
		t := q.Poll()
		if t == nil {
			sleeping.Store(true)
			if t = q.Poll(); t == nil {
				<-wake
				continue
			}
			sleeping.Store(false)
		}
		t.Run()
		got++
		if waiting.Load() > 0 {
			select {
			case space <- struct{}{}:
			default:
			}
		}
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
