package taskq

import (
	"fmt"
	"math"
	"testing"

	"github.com/ringloop/ringloop/tasks"
)

// drainCheck polls q until empty and checks it yields want, in order.
func drainCheck(t *testing.T, q Queue, want []*item) {
	t.Helper()
	for i, w := range want {
		got := q.Poll()
		if got != tasks.Task(w) {
			t.Fatalf("Poll %d: got %v, want item %d", i, got, w.k)
		}
	}
	if x := q.Poll(); x != nil {
		t.Fatalf("extra task %v after %d", x, len(want))
	}
}

func TestUnboundedOrderAndEmpty(t *testing.T) {
	q := NewUnbounded(16)
	eq(t, q.Poll(), nil, "Poll on empty")
	it := items(0, 1000)
	for i, x := range it {
		must(t, q.Offer(x), "Offer refused")
		eq(t, q.Len(), i+1, "Len")
	}
	drainCheck(t, q, it)
	eq(t, q.Len(), 0, "Len after drain")
}

// TestUnboundedGrowsThenReuses checks growth allocates chunks, and that a
// queue whose length stays within a chunk or two then only reuses them.
func TestUnboundedGrowsThenReuses(t *testing.T) {
	q := newChunked(16, 0, 0)
	it := items(0, 1600)
	for _, x := range it {
		q.Offer(x)
	}
	eq(t, q.allocs.Load(), int64(100), "chunks allocated for 1600 tasks")
	drainCheck(t, q, it)
	eq(t, q.dropped.Load(), int64(99-numSpares), "drained chunks beyond the spares go to the GC")

	allocs := q.allocs.Load()
	reuses := q.reuses.Load()
	for round := range 500 {
		batch := it[:1+round%30]
		for _, x := range batch {
			q.Offer(x)
		}
		drainCheck(t, q, batch)
	}
	eq(t, q.allocs.Load(), allocs, "steady state allocates no chunk")
	must(t, q.reuses.Load()-reuses > 400, "chunks reused: %d", q.reuses.Load()-reuses)
}

func TestUnboundedClearsReadSlots(t *testing.T) {
	q := newChunked(16, 0, 0)
	it := items(0, 3)
	for _, x := range it {
		q.Offer(x)
	}
	q.Poll()
	q.Poll()
	eq(t, q.head.slots[0].task, nil, "slot 0 after read")
	eq(t, q.head.slots[1].task, nil, "slot 1 after read")
	eq(t, q.head.slots[2].task, tasks.Task(it[2]), "unread slot 2")
}

func TestUnboundedWrap(t *testing.T) {
	for _, n := range []int{2, 4, 16} {
		for _, start := range []uint64{math.MaxUint64 - 50, math.MaxUint64 - uint64(n) + 1, 1<<63 - 8} {
			q := newChunked(n, 0, start)
			s0 := q.ci
			it := items(0, 300)
			read := 0
			for round := range 10 {
				batch := it[:(round*37)%len(it)+1]
				for _, x := range batch {
					must(t, q.Offer(x), "Offer refused")
				}
				eq(t, q.Len(), len(batch), fmt.Sprintf("Len n %d start %d round %d pIndex %d consumed %d ci %d", n, start, round, q.pIndex.Load(), q.consumed.Load(), q.ci))
				drainCheck(t, q, batch)
				read += len(batch)
			}
			eq(t, q.ci-s0, uint64(read), fmt.Sprintf("positions advanced (n %d start %d)", n, start))
			must(t, start < math.MaxUint64-100 || q.ci < s0, "positions did not wrap")
		}
	}
}

func TestChunkedLimit(t *testing.T) {
	q := NewQueue(1 << 17)
	c := q.(*chunked)
	eq(t, c.allocs.Load(), int64(1), "a large bounded queue starts with one chunk")
	x := &item{}
	for i := range 1 << 17 {
		if !q.Offer(x) {
			t.Fatalf("Offer %d refused below the capacity", i)
		}
	}
	must(t, !q.Offer(x), "Offer beyond the capacity accepted")
	eq(t, q.Len(), 1<<17, "Len when full")
	eq(t, q.Poll(), tasks.Task(x), "Poll")
	must(t, q.Offer(x), "Offer after a Poll refused")
	must(t, !q.Offer(x), "full again")
}
