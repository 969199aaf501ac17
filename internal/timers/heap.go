package timers

import "github.com/ringloop/ringloop/tasks"

// Heap holds the timers of one event loop. It is single-threaded: only the
// owning loop calls its methods (Scheduled.Cancel is the one exception; it is
// safe from any goroutine because it routes the removal through the owner).
//
// Structure: a hierarchical hashed wheel for every timer whose tick lies after
// the cursor, and an exact binary heap ordered by (deadline, sequence) for the
// timers of the current tick (see wheel.go). Arming and stopping a timer in
// the wheel is O(1); re-arming a pending wheel timer for a later deadline only
// rewrites two fields. Only timers about to fire pay the O(log k) heap cost, k
// being the timers of one tick.
type Heap struct {
	owner   tasks.Executor
	clock   func() int64
	seq     uint64
	n       int // pending timers: wheel + exact heap
	wcount  int // pending timers in the wheel
	cur     int64
	near    []*Timer
	polling bool
	bm      [numLevels]uint64
	slots   [numSlots]*Timer
}

// NewHeap returns an empty heap owned by owner. owner routes the removal of a
// Scheduled cancelled from another goroutine (owner.Execute) and tells whether
// the caller is on the loop (owner.InEventLoop). A nil owner means that every
// call, Cancel included, comes from one goroutine (tests, single-threaded use).
func NewHeap(owner tasks.Executor) *Heap {
	return &Heap{owner: owner, clock: Now}
}

// SetClock replaces the clock (default Now) used by Schedule*, periodic
// re-arming and Delay. now must be monotonic and safe to call from any
// goroutine (Delay calls it). Tests use a fake clock.
func (h *Heap) SetClock(now func() int64) {
	if now == nil {
		now = Now
	}
	h.clock = now
}

// Now reads the heap's clock.
func (h *Heap) Now() int64 { return h.clock() }

// Len returns the number of pending timers (plain Timers and Scheduled).
func (h *Heap) Len() int { return h.n }

// Start arms t for deadline (monotonic ns, see Now and DeadlineAfter), or
// re-arms it if it is pending. Re-arming counts as scheduling anew: among
// equal deadlines t now fires after every timer armed before this call. O(1)
// unless the deadline falls in the current tick; moving a pending deadline
// later (an idle timeout reset on every read) rewrites t in place.
func (h *Heap) Start(t *Timer, deadline int64) {
	h.seq++
	switch {
	case t.loc > 0:
		if deadline>>tickShift >= h.slotStart(int(t.loc-1)) {
			// Still at or after the start of its slot: stays where it is
			// and is filed again when the cursor reaches the slot.
			t.deadline, t.seq = deadline, h.seq
			return
		}
		h.unlink(t)
	case t.loc == locHeap:
		if deadline>>tickShift <= h.cur {
			t.deadline, t.seq = deadline, h.seq
			h.fixAt(int(t.index))
			return
		}
		h.heapRemove(t)
	default:
		h.n++
	}
	t.deadline, t.seq = deadline, h.seq
	h.file(t)
}

// Stop disarms t and reports whether it was pending. Its memory is released
// at once: no tombstone stays behind.
func (h *Heap) Stop(t *Timer) bool {
	switch {
	case t.loc > 0:
		h.unlink(t)
	case t.loc == locHeap:
		h.heapRemove(t)
	default:
		return false
	}
	h.n--
	return true
}

// NextDeadline returns the exact deadline of the earliest pending timer, so
// the loop can block until precisely then; ok is false when nothing is
// pending.
//
// When no timer is in the current tick, it moves the wheel cursor to the
// earliest non-empty slot (possibly ahead of the clock) to learn the exact
// minimum. Until the clock catches up, timers armed for before that minimum go
// to the exact heap (O(log k) instead of O(1)); they are by construction the
// earliest ones and few.
func (h *Heap) NextDeadline() (deadline int64, ok bool) {
	for {
		for len(h.near) > 0 {
			t := h.near[0]
			if !cancelledEntry(t) {
				return t.deadline, true
			}
			h.heapRemove(t)
			h.n--
		}
		if h.wcount == 0 {
			return 0, false
		}
		h.cascade(h.earliest())
	}
}

// PollDue removes every timer due at now (deadline <= now) and passes its task
// to fn, in (deadline, sequence) order, returning how many it passed: the loop
// moves them into its task run (Netty's fetchFromScheduledTaskQueue). For a
// Scheduled, the task runs the user's task, completes the future and re-arms a
// periodic one (on the heap, so it must run on the loop). Entries whose
// Scheduled was cancelled from another goroutine and not yet removed are
// dropped without calling fn.
//
// fn may arm and stop timers. Timers armed during the call are not passed by
// the same call, even if due (so a zero-delay timer re-arming itself cannot
// keep PollDue busy); if such a timer becomes the earliest, PollDue returns
// early and the next call continues in order. fn must not call PollDue.
func (h *Heap) PollDue(now int64, fn func(tasks.Task)) int {
	if h.polling {
		panic("timers: PollDue called from its own callback")
	}
	h.polling = true
	defer func() { h.polling = false }()
	h.advance(now >> tickShift)
	start := h.seq
	n := 0
	for len(h.near) > 0 {
		t := h.near[0]
		if t.deadline > now || t.seq > start {
			break
		}
		h.heapRemove(t)
		h.n--
		if cancelledEntry(t) {
			continue
		}
		n++
		fn(t.task)
	}
	return n
}

// CancelAll empties the heap for shutdown (Netty's cancelScheduledTasks):
// every pending Scheduled is cancelled (its future reports cancellation) and
// every Timer is stopped. The heap stays usable; the loop calls CancelAll
// again if tasks armed new timers meanwhile.
func (h *Heap) CancelAll() {
	var all []*Timer
	all = append(all, h.near...)
	for i, t := range h.slots {
		for ; t != nil; t = t.next {
			all = append(all, t)
		}
		h.slots[i] = nil
	}
	clear(h.near)
	h.near = h.near[:0]
	h.bm = [numLevels]uint64{}
	h.wcount, h.n = 0, 0
	for _, t := range all {
		t.next, t.prev = nil, nil
		t.loc = locIdle
	}
	for _, t := range all {
		if s := scheduledOf(t); s != nil {
			s.cancel()
		}
	}
}
