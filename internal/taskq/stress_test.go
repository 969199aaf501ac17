package taskq

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// stressWindow is how many distinct pre-built items each producer cycles
// through: the consumer checks every task is the very item expected next
// from its producer, so a loss, duplicate or reordering shows unless it
// spans exactly a multiple of the window, which the per-producer counts
// then catch.
const stressWindow = 1 << 12

// stress runs producers×n offers into q against one consumer and checks
// that every producer's tasks arrive complete, once each, in order. A
// concurrent reader checks Len stays within bounds. Producers enqueue with
// the Reject policy and retry on ErrRejected. On a bounded queue the
// consumer stops twice, at the start and halfway (after the ring wrapped),
// until a producer is refused, so the full-queue path runs on every bounded
// queue however fast the consumer is, and a full queue's Len is its Cap.
func stress(t *testing.T, q Queue, producers, n int) {
	t.Helper()
	pool := make([][]*item, producers)
	for p := range pool {
		pool[p] = items(p, min(n, stressWindow))
	}
	var (
		wg       sync.WaitGroup
		stop     atomic.Bool
		offered  atomic.Int64
		rejected atomic.Int64
	)
	for p := range producers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			own := pool[p]
			for i := range n {
				for {
					if q.Offer(own[i%len(own)]) {
						break
					}
					rejected.Add(1)
					runtime.Gosched()
				}
				offered.Add(1)
			}
		}()
	}
	lenErr := make(chan error, 1)
	var lenWG sync.WaitGroup
	lenWG.Add(1)
	go func() {
		defer lenWG.Done()
		for !stop.Load() {
			l := q.Len()
			if l < 0 || (q.Cap() >= 0 && l > q.Cap()) || l > producers*n {
				lenErr <- fmt.Errorf("Len %d out of bounds (cap %d)", l, q.Cap())
				return
			}
			runtime.Gosched()
		}
	}()

	next := make([]int, producers)
	total := producers * n
	deadline := time.Now().Add(30 * time.Second)
	holds := 0
	for got := 0; got < total; {
		if q.Cap() >= 0 && (got == 0 && holds == 0 || got == total/2 && holds == 1) && total-got > q.Cap() {
			// Consume nothing until a producer is refused: with more tasks
			// left than the queue holds, one must be.
			r0 := rejected.Load()
			for rejected.Load() == r0 {
				if time.Now().After(deadline) {
					t.Fatalf("the consumer stopped at %d of %d tasks, yet no producer was refused (Len %d, cap %d)", got, total, q.Len(), q.Cap())
				}
				runtime.Gosched()
			}
			eq(t, q.Len(), q.Cap(), fmt.Sprintf("Len of the full queue at %d of %d tasks", got, total))
			holds++
		}
		x := q.Poll()
		if x == nil {
			if time.Now().After(deadline) {
				t.Fatalf("stalled after %d of %d tasks (offered %d)", got, total, offered.Load())
			}
			runtime.Gosched()
			continue
		}
		it := x.(*item)
		p := int(it.p)
		if next[p] >= n {
			t.Fatalf("producer %d: more than %d tasks", p, n)
		}
		if want := pool[p][next[p]%len(pool[p])]; it != want {
			t.Fatalf("producer %d: task %d out of order: got item %d, want item %d", p, next[p], it.k, want.k)
		}
		next[p]++
		got++
		if got&4095 == 0 {
			deadline = time.Now().Add(30 * time.Second) // progress
		}
	}
	wg.Wait()
	stop.Store(true)
	lenWG.Wait()
	select {
	case err := <-lenErr:
		t.Fatal(err)
	default:
	}
	for p, c := range next {
		eq(t, c, n, fmt.Sprintf("tasks of producer %d", p))
	}
	eq(t, q.Poll(), nil, "Poll after all tasks")
	eq(t, q.Len(), 0, "Len after all tasks")
	if q.Cap() >= 0 && total > q.Cap() {
		must(t, holds >= 1 && rejected.Load() >= int64(holds), "a %d-slot queue: %d stops, %d refusals", q.Cap(), holds, rejected.Load())
	}
}

// stressN is the per-producer task count: 10^6 without -race.
func stressN() int {
	n := 1_000_000
	if raceEnabled {
		n = 20_000
	}
	if testing.Short() {
		n /= 10
	}
	return n
}

func TestStress(t *testing.T) {
	kinds := []struct {
		name string
		make func() Queue
	}{
		{"bounded1024", func() Queue { return NewBounded(1024) }},
		{"bounded16", func() Queue { return NewBounded(16) }},
		{"unbounded", func() Queue { return NewUnbounded(0) }},
		{"unbounded-chunk2", func() Queue { return NewUnbounded(2) }},
		{"chunked-limit", func() Queue { return newChunked(4, 64, 0) }},
		{"unbounded-wrap", func() Queue { return newChunked(8, 0, math.MaxUint64-999) }},
	}
	for _, k := range kinds {
		for _, p := range []int{1, 4, 16} {
			t.Run(fmt.Sprintf("%s/P%d", k.name, p), func(t *testing.T) {
				stress(t, k.make(), p, stressN())
			})
		}
	}
}

// TestStressRecycling hammers chunk linking and recycling with tiny chunks
// and random yields inside the lock-free windows, where a stale chunk
// pointer would do harm, and checks chunks were both recycled and reused.
func TestStressRecycling(t *testing.T) {
	q := newChunked(2, 0, 0)
	q.hook = func(int) {
		if rand.IntN(8) == 0 {
			runtime.Gosched()
		}
	}
	stress(t, q, 8, stressN()/4)
	must(t, q.reuses.Load() > 0, "no chunk was reused")
	t.Logf("chunks: %d allocated, %d reused, %d left to the GC", q.allocs.Load(), q.reuses.Load(), q.dropped.Load())
}
