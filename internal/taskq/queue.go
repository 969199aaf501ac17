package taskq

import (
	"math"
	"math/bits"

	"github.com/ringloop/ringloop/tasks"
)

// Queue is a multi-producer, single-consumer task queue: any goroutine may
// Offer, only the consumer (the event loop) may Poll.
//
// Order: tasks offered by one goroutine are polled in the order it offered
// them; across goroutines the order is the order in which their Offer calls
// claimed a position (the linearization order).
type Queue interface {
	// Offer enqueues t from any goroutine. It never blocks and returns false
	// only when a bounded queue is full.
	Offer(t tasks.Task) bool
	// Poll dequeues the next task; consumer only. It returns nil when the
	// queue is empty, or when the next task's producer has claimed its
	// position but not yet published the task (that producer is about to
	// finish and will wake the consumer; Poll never spins).
	Poll() tasks.Task
	// Len is an approximate number of queued tasks, safe from any goroutine:
	// a snapshot of the producer index minus the consumer index. It counts
	// tasks claimed but not yet published and can be stale by the time it
	// returns; it is never negative and never more than Cap (when bounded).
	// To keep Poll cheap the consumer publishes its index every 32 polls
	// and whenever Poll returns nil, so while the consumer is draining, Len
	// may count up to 31 tasks it has already taken; once a Poll has found
	// the queue empty, Len is exact until the next Offer.
	Len() int
	// Cap is the capacity, or -1 when the queue is unbounded.
	Cap() int
}

const (
	// minCapacity is Netty's clamp: maxPendingTasks = max(16, maxPendingTasks).
	minCapacity = 16
	// maxPrealloc is the largest capacity NewQueue preallocates as one ring;
	// larger bounded queues grow in chunks up to their capacity.
	maxPrealloc = 1 << 16
	// DefaultChunkSize is the slot count of one chunk of an unbounded queue
	// (as Netty's MpscUnboundedArrayQueue(1024)).
	DefaultChunkSize = 1024
	// minChunkSize and maxChunkSize bound NewUnbounded's chunk size (a
	// chunk of one slot could not tell a free slot from a published one).
	minChunkSize = 2
	maxChunkSize = 1 << 20
	// lenLag is how often (in polls, a power of two) the consumer publishes
	// its index for Len.
	lenLag = 32
	// maxCapacity caps bounded queues so that rounding up cannot overflow.
	maxCapacity = 1 << (bits.UintSize - 2)
)

// NewBounded returns a lock-free bounded queue backed by one preallocated
// ring. The capacity is rounded up to a power of two, at least 16.
func NewBounded(capacity int) Queue {
	return newBounded(capacity, 0)
}

// NewUnbounded returns a lock-free unbounded queue that grows in chunks of
// chunkSize slots (rounded up to a power of two, from 2 to 1<<20; 0 or less
// picks DefaultChunkSize) and recycles drained chunks.
func NewUnbounded(chunkSize int) Queue {
	return newChunked(chunkSize, 0, 0)
}

// NewQueue returns the queue an event loop with Netty's maxPendingTasks would
// use. maxPending <= 0 or math.MaxInt (Netty's default Integer.MAX_VALUE)
// gives an unbounded queue. Any other value gives a bounded queue of
// max(16, maxPending) rounded up to a power of two: up to 65536 slots as one
// preallocated ring, beyond that as chunks allocated on demand up to the
// capacity, so a large limit costs no memory until it is used.
func NewQueue(maxPending int) Queue {
	if maxPending <= 0 || maxPending == math.MaxInt {
		return NewUnbounded(0)
	}
	c := roundCapacity(maxPending)
	if c <= maxPrealloc {
		return newBounded(c, 0)
	}
	return newChunked(DefaultChunkSize, uint64(c), 0)
}

// roundCapacity applies the minimum and rounds up to a power of two.
func roundCapacity(n int) int {
	if n < minCapacity {
		n = minCapacity
	}
	if n > maxCapacity {
		n = maxCapacity
	}
	return int(pow2(uint64(n)))
}

// pow2 rounds n (>= 1) up to a power of two.
func pow2(n uint64) uint64 {
	p := uint64(1)
	for p < n {
		p <<= 1
	}
	return p
}

// pad keeps fields written by different goroutines on separate cache lines.
type pad [64]byte
