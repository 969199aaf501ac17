package taskq

import (
	"math"
	"sync/atomic"

	"github.com/ringloop/ringloop/tasks"
)

// bounded is a Vyukov-style ring of sequence-numbered slots.
//
// Slot i holds seq == pos when it is free for the producer of position pos,
// and seq == pos+1 once that producer published its task. A producer claims
// pos with a CAS on tail and publishes with a store to the slot's seq; the
// consumer reads the slot whose seq is head+1, clears it and frees it for
// pos+capacity. Positions are uint64 and compared by difference, so they
// may wrap around.
type bounded struct {
	_     pad
	tail  atomic.Uint64 // next position to claim; producers
	_     pad
	head  uint64        // next position to read; consumer only
	headN atomic.Uint64 // head as Len sees it (see lenLag)
	_     pad
	mask  uint64
	slots []slot
}

// slot is one position of a ring or chunk.
type slot struct {
	seq  atomic.Uint64
	task tasks.Task
}

// newBounded builds a ring whose positions start at start (tests use a start
// close to the uint64 wrap point).
func newBounded(capacity int, start uint64) *bounded {
	n := uint64(roundCapacity(capacity))
	q := &bounded{mask: n - 1, slots: make([]slot, n)}
	for i := range q.slots {
		// The first position >= start that maps to slot i.
		q.slots[i].seq.Store(start + ((uint64(i) - start) & q.mask))
	}
	q.head = start
	q.headN.Store(start)
	q.tail.Store(start)
	return q
}

func (q *bounded) Offer(t tasks.Task) bool {
	for {
		pos := q.tail.Load()
		s := &q.slots[pos&q.mask]
		d := int64(s.seq.Load() - pos)
		switch {
		case d == 0:
			if q.tail.CompareAndSwap(pos, pos+1) {
				s.task = t
				s.seq.Store(pos + 1)
				return true
			}
		case d < 0:
			// The slot still holds the task of pos-capacity, so at least
			// capacity positions are in use: full.
			return false
		}
		// d > 0: another producer took pos; reload.
	}
}

func (q *bounded) Poll() tasks.Task {
	pos := q.head
	s := &q.slots[pos&q.mask]
	if s.seq.Load() != pos+1 {
		if q.headN.Load() != pos {
			q.headN.Store(pos)
		}
		return nil
	}
	t := s.task
	s.task = nil
	s.seq.Store(pos + q.mask + 1)
	q.head = pos + 1
	if q.head&(lenLag-1) == 0 {
		q.headN.Store(q.head)
	}
	return t
}

func (q *bounded) Len() int {
	h := q.headN.Load() // head first: the difference cannot be negative
	n := q.tail.Load() - h
	if n > q.mask+1 {
		n = q.mask + 1
	}
	return clampInt(n)
}

func (q *bounded) Cap() int { return int(q.mask + 1) }

func clampInt(n uint64) int {
	if n > math.MaxInt {
		return math.MaxInt
	}
	return int(n)
}
