package taskq

import (
	"math"
	"sync/atomic"

	"github.com/ringloop/ringloop/tasks"
)

// chunked is an MPSC queue made of a linked list of fixed-size chunks, for
// the unbounded queue (and for bounded queues too large to preallocate).
//
// Every task gets a global position p (a uint64 that may wrap). A chunk
// holds the n positions [base, base+n); slot p&mask of the chunk holding p
// carries the task, published by storing p+1 in the slot's seq.
//
// Producers share pIndex (the next position to claim) and pb (the chunk that
// holds pIndex). Invariant I: pIndex-pb.base is in [0, n]. A producer loads
// pIndex, then pb, then pb.base; if p lies in that chunk it claims p with a
// CAS on pIndex. A successful CAS proves the chunk it read is the current
// incarnation of p's chunk: pIndex stayed p throughout, so pb could not
// advance (that needs pIndex == base+n), and a stale pb (one retired before
// the load) has either its old base, with p == base+n outside the chunk, or
// a newer base beyond p. Claims are CASes, not fetch-adds, so a producer
// never takes a position it cannot use, and no producer ever waits for
// another: at a chunk boundary any producer links the next chunk and
// advances pb (advance), so the queue is lock-free.
//
// Recycling. The consumer retires a chunk once it has read all n slots and
// moved to the next chunk; a retired chunk goes to a few spare slots that
// producers take from when they link, so a queue in steady state allocates
// nothing. The ABA hazard is a producer still holding a pointer to a chunk
// that is retired and relinked with a new base. The fast path above is safe
// by the base check and the CAS: bases are unique (each range of positions
// is linked once), a base is written only by the producer that holds the
// chunk privately (taken from the spares), and no base a stale read can
// return places the still-unclaimed p in that chunk. The slow path (advance: read next, CAS next, CAS pb) is
// protected by pins: a producer increments the chunk's pins and then checks
// pb still points to it; the consumer first makes sure pb no longer points to
// the chunk and then reads pins, and recycles only at zero (a pinned chunk
// waits in a short limbo list, or is left to the garbage collector). With
// sequentially consistent atomics one of the two sides always sees the
// other, so a recycled chunk is never touched through a stale pointer.
// Slot seqs hold global positions, so stale seqs in a recycled chunk never
// match, and no slot needs resetting.
type chunked struct {
	_      pad
	pIndex atomic.Uint64         // next position to claim
	pb     atomic.Pointer[chunk] // chunk holding pIndex (invariant I)
	_      pad

	// consumer side
	head     *chunk
	hbase    uint64 // head.base
	ci       uint64 // next position to read
	consumed atomic.Uint64
	limbo    []*chunk
	_        pad

	spares [numSpares]atomic.Pointer[chunk]
	_      pad

	n, mask uint64
	limit   uint64 // capacity; 0 when unbounded

	allocs  atomic.Int64 // chunks allocated (tests)
	reuses  atomic.Int64 // chunks taken from spares (tests)
	dropped atomic.Int64 // retired chunks left to the GC (tests)
	hook    func(point int)
}

// numSpares is how many drained chunks a queue keeps for reuse; the
// consumer keeps up to maxLimbo more that were pinned when retired.
const (
	numSpares = 4
	maxLimbo  = 4
)

// hook points, called when a test installs a hook.
const (
	hookFastPath = iota // between loading pb and reading its base
	hookPinned          // in advance, after pinning
	hookLink            // in advance, before linking a chunk
)

type chunk struct {
	base  atomic.Uint64 // first position; set before the chunk is linked
	next  atomic.Pointer[chunk]
	pins  atomic.Int64
	slots []slot
}

// newChunked builds a queue of chunks of chunkSize slots; limit 0 means
// unbounded. start is the first position (tests start near the wrap point).
func newChunked(chunkSize int, limit uint64, start uint64) *chunked {
	if chunkSize <= 0 {
		chunkSize = DefaultChunkSize
	}
	if chunkSize < minChunkSize {
		chunkSize = minChunkSize
	}
	if chunkSize > maxChunkSize {
		chunkSize = maxChunkSize
	}
	n := pow2(uint64(chunkSize))
	q := &chunked{n: n, mask: n - 1, limit: limit}
	start &^= q.mask // chunks are aligned, so slot p&mask works across the wrap
	c := q.newChunk()
	c.base.Store(start)
	q.pIndex.Store(start)
	q.pb.Store(c)
	q.head, q.hbase, q.ci = c, start, start
	q.consumed.Store(start)
	return q
}

func (q *chunked) newChunk() *chunk {
	q.allocs.Add(1)
	c := &chunk{slots: make([]slot, q.n)}
	// Slot i only ever carries positions p ≡ i (mod n), published as p+1 ≡
	// i+1. A zero seq would match p+1 for p ≡ n-1 (at the uint64 wrap);
	// seq i never matches. A recycled slot holds an older p+1 of its own,
	// which cannot match a new position either.
	for i := range c.slots {
		c.slots[i].seq.Store(uint64(i))
	}
	return c
}

func (q *chunked) Offer(t tasks.Task) bool {
	for {
		p := q.pIndex.Load()
		c := q.pb.Load()
		if q.hook != nil {
			q.hook(hookFastPath)
		}
		if p-c.base.Load() >= q.n {
			q.advance(c)
			continue
		}
		// Signed: a stale p may lie behind the consumer.
		if q.limit != 0 && int64(p-q.consumed.Load()) >= int64(q.limit) {
			return false
		}
		if q.pIndex.CompareAndSwap(p, p+1) {
			s := &c.slots[p&q.mask]
			s.task = t
			s.seq.Store(p + 1)
			return true
		}
	}
}

// advance moves pb past the full chunk c, linking a new chunk after c first
// if nobody has. It does nothing if c is no longer pb or not full.
func (q *chunked) advance(c *chunk) {
	c.pins.Add(1)
	defer c.pins.Add(-1)
	if q.hook != nil {
		q.hook(hookPinned)
	}
	if q.pb.Load() != c {
		return // c moved on (perhaps retired): reload
	}
	// Pinned while current: c cannot be recycled until we unpin.
	b := c.base.Load()
	if q.pIndex.Load()-b < q.n {
		return // not full
	}
	next := c.next.Load()
	if next == nil {
		if q.hook != nil {
			q.hook(hookLink)
		}
		m := q.takeSpare()
		m.base.Store(b + q.n)
		if c.next.CompareAndSwap(nil, m) {
			next = m
		} else {
			q.putSpare(m)
			next = c.next.Load()
		}
	}
	q.pb.CompareAndSwap(c, next)
}

func (q *chunked) takeSpare() *chunk {
	for i := range q.spares {
		if q.spares[i].Load() != nil {
			if c := q.spares[i].Swap(nil); c != nil {
				q.reuses.Add(1)
				return c
			}
		}
	}
	return q.newChunk()
}

func (q *chunked) putSpare(c *chunk) {
	for i := range q.spares {
		if q.spares[i].CompareAndSwap(nil, c) {
			return
		}
	}
	q.dropped.Add(1)
}

func (q *chunked) Poll() tasks.Task {
	if q.ci-q.hbase == q.n {
		next := q.head.next.Load()
		if next == nil {
			q.publishConsumed()
			return nil
		}
		q.retire(q.head, next)
		q.head, q.hbase = next, next.base.Load()
	}
	s := &q.head.slots[q.ci&q.mask]
	if s.seq.Load() != q.ci+1 {
		q.publishConsumed()
		return nil
	}
	t := s.task
	s.task = nil
	q.ci++
	if q.limit != 0 || q.ci&(lenLag-1) == 0 {
		q.consumed.Store(q.ci)
	}
	return t
}

// publishConsumed makes Len exact again once the consumer finds the queue
// empty (or the next task unpublished).
func (q *chunked) publishConsumed() {
	if q.consumed.Load() != q.ci {
		q.consumed.Store(q.ci)
	}
}

// retire recycles the drained chunk c, whose successor is next.
func (q *chunked) retire(c, next *chunk) {
	// pb must not point to c before pins are read (see the type comment).
	if q.pb.Load() == c {
		q.pb.CompareAndSwap(c, next)
	}
	kept := q.limbo[:0]
	for _, l := range q.limbo {
		if l.pins.Load() == 0 {
			q.recycle(l)
		} else {
			kept = append(kept, l)
		}
	}
	clear(q.limbo[len(kept):])
	q.limbo = kept
	if c.pins.Load() == 0 {
		q.recycle(c)
	} else if len(q.limbo) < maxLimbo {
		q.limbo = append(q.limbo, c)
	} else {
		q.dropped.Add(1)
	}
}

func (q *chunked) recycle(c *chunk) {
	c.next.Store(nil)
	q.putSpare(c)
}

func (q *chunked) Len() int {
	ci := q.consumed.Load() // consumer index first: the difference cannot be negative
	n := q.pIndex.Load() - ci
	if q.limit != 0 && n > q.limit {
		n = q.limit
	}
	return clampInt(n)
}

func (q *chunked) Cap() int {
	if q.limit == 0 {
		return -1
	}
	if q.limit > math.MaxInt {
		return math.MaxInt
	}
	return int(q.limit)
}
