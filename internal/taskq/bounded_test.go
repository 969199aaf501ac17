package taskq

import (
	"fmt"
	"math"
	"testing"

	"github.com/ringloop/ringloop/tasks"
)

func TestCapacityRounding(t *testing.T) {
	for _, c := range []struct{ in, want int }{
		{-5, 16}, {0, 16}, {1, 16}, {16, 16}, {17, 32}, {1000, 1024}, {1024, 1024},
	} {
		eq(t, NewBounded(c.in).Cap(), c.want, fmt.Sprintf("NewBounded(%d).Cap()", c.in))
	}
	eq(t, NewQueue(0).Cap(), -1, "NewQueue(0).Cap()")
	eq(t, NewQueue(-1).Cap(), -1, "NewQueue(-1).Cap()")
	eq(t, NewQueue(math.MaxInt).Cap(), -1, "NewQueue(MaxInt).Cap()")
	eq(t, NewQueue(5).Cap(), 16, "NewQueue(5).Cap()")
	eq(t, NewQueue(100).Cap(), 128, "NewQueue(100).Cap()")
	_, ok := NewQueue(maxPrealloc).(*bounded)
	must(t, ok, "NewQueue(%d) should be one preallocated ring", maxPrealloc)
	big := NewQueue(maxPrealloc + 1)
	_, ok = big.(*chunked)
	must(t, ok, "NewQueue(%d) should grow in chunks", maxPrealloc+1)
	eq(t, big.Cap(), 2*maxPrealloc, "NewQueue(maxPrealloc+1).Cap()")
	eq(t, NewUnbounded(0).Cap(), -1, "NewUnbounded(0).Cap()")
	eq(t, NewUnbounded(0).(*chunked).n, uint64(DefaultChunkSize), "default chunk size")
	eq(t, NewUnbounded(5).(*chunked).n, uint64(8), "chunk size 5 rounded")
	eq(t, NewUnbounded(1).(*chunked).n, uint64(2), "chunk size at least 2")
	eq(t, NewUnbounded(1<<30).(*chunked).n, uint64(maxChunkSize), "chunk size capped")
}

func TestBoundedFullAndEmpty(t *testing.T) {
	q := NewBounded(16)
	eq(t, q.Poll(), nil, "Poll on empty")
	eq(t, q.Len(), 0, "Len on empty")
	it := items(0, 17)
	for i := range 16 {
		must(t, q.Offer(it[i]), "Offer %d refused", i)
		eq(t, q.Len(), i+1, "Len")
	}
	must(t, !q.Offer(it[16]), "full ring must refuse")
	eq(t, q.Len(), 16, "Len when full")
	eq(t, q.Poll(), tasks.Task(it[0]), "first Poll")
	must(t, q.Offer(it[16]), "one slot was freed")
	must(t, !q.Offer(it[0]), "full again")
	for i := 1; i <= 16; i++ {
		eq(t, q.Poll(), tasks.Task(it[i]), "Poll order")
	}
	eq(t, q.Poll(), nil, "Poll after drain")
	eq(t, q.Len(), 0, "Len after drain")
}

func TestBoundedClearsReadSlots(t *testing.T) {
	q := newBounded(16, 0)
	it := items(0, 3)
	for _, x := range it {
		q.Offer(x)
	}
	q.Poll()
	q.Poll()
	eq(t, q.slots[0].task, nil, "slot 0 after read")
	eq(t, q.slots[1].task, nil, "slot 1 after read")
	eq(t, q.slots[2].task, tasks.Task(it[2]), "unread slot 2")
}

// TestBoundedWrap runs rings across the uint64 wrap of their positions:
// order, full and empty must behave as anywhere else.
func TestBoundedWrap(t *testing.T) {
	for _, start := range []uint64{math.MaxUint64 - 40, math.MaxUint64, math.MaxUint64 - 15, 1<<63 - 3} {
		q := newBounded(16, start)
		it := items(0, 16*20)
		next, read := 0, 0
		for round := range 20 {
			// fill completely, then drain a varying amount
			for q.Offer(it[next%len(it)]) {
				next++
			}
			eq(t, q.Len(), 16, "Len when full")
			for range 1 + round%16 {
				eq(t, q.Poll(), tasks.Task(it[read%len(it)]), fmt.Sprintf("start %d round %d", start, round))
				read++
			}
		}
		for x := q.Poll(); x != nil; x = q.Poll() {
			eq(t, x, tasks.Task(it[read%len(it)]), "final drain")
			read++
		}
		eq(t, read, next, "read all offered")
		eq(t, q.Len(), 0, "Len after drain")
		head := q.head
		eq(t, head-start, uint64(read), "positions advanced")
		must(t, start < math.MaxUint64-100 || head < start, "positions did not cross the wrap: start %d head %d", start, head)
	}
}
