package timers

import "math/bits"

// The wheel: hierarchical hashed slots for every timer whose tick lies after
// the cursor. A tick is 2^tickShift ns (about 1.05 ms). Level L has 64 slots
// of 64^L ticks each. A timer goes to the level of the highest bit in which its
// tick differs from the cursor (tick XOR cursor), at the slot given by its
// tick's bits for that level. Consequences that the code relies on:
//
//   - every slot of level L starts after the cursor and before every slot of
//     level L+1, so the earliest non-empty slot is the lowest set bit of the
//     lowest non-empty level (two bit operations);
//   - a timer never sits in a slot that starts after its deadline: the wheel
//     may hold a timer in an earlier slot than its deadline needs (Start moves
//     a deadline later in place, which is what makes resetting idle timers
//     O(1) with no memory traffic), and such a timer is simply filed again when
//     the cursor reaches its slot.
//
// When the cursor reaches a slot, its timers are filed again relative to the
// new cursor: into lower levels, or into the exact heap once their tick is the
// cursor's. Each timer is thus moved at most once per level (eight levels cover
// the whole int64 range), and a timer stopped before that costs O(1) in total.
const (
	tickShift = 20
	levelBits = 6
	levelSize = 1 << levelBits
	slotMask  = levelSize - 1
	numLevels = (63 - tickShift + levelBits - 1) / levelBits // 8
	numSlots  = numLevels * levelSize
)

// file puts a pending timer where its deadline belongs: the exact heap if its
// tick is not after the cursor, else a wheel slot.
func (h *Heap) file(t *Timer) {
	tick := t.deadline >> tickShift
	if tick <= h.cur {
		h.heapPush(t)
		return
	}
	lvl := (bits.Len64(uint64(tick^h.cur)) - 1) / levelBits
	slot := lvl<<levelBits | int(uint64(tick)>>(uint(lvl)*levelBits))&slotMask
	head := h.slots[slot]
	t.next = head
	t.prev = nil
	if head != nil {
		head.prev = t
	} else {
		h.bm[lvl] |= 1 << uint(slot&slotMask)
	}
	h.slots[slot] = t
	t.loc = int32(slot) + 1
	h.wcount++
}

// unlink removes a timer from its wheel slot.
func (h *Heap) unlink(t *Timer) {
	slot := int(t.loc - 1)
	if t.prev != nil {
		t.prev.next = t.next
	} else {
		h.slots[slot] = t.next
		if t.next == nil {
			h.bm[slot>>levelBits] &^= 1 << uint(slot&slotMask)
		}
	}
	if t.next != nil {
		t.next.prev = t.prev
	}
	t.next, t.prev = nil, nil
	t.loc = locIdle
	h.wcount--
}

// slotStart is the first tick of a non-empty slot, relative to the cursor.
func (h *Heap) slotStart(slot int) int64 {
	lvl := uint(slot >> levelBits)
	hi := (lvl + 1) * levelBits
	return h.cur>>hi<<hi | int64(slot&slotMask)<<(lvl*levelBits)
}

// earliest returns the earliest non-empty slot; the wheel must not be empty.
func (h *Heap) earliest() int {
	for lvl := 0; lvl < numLevels; lvl++ {
		if b := h.bm[lvl]; b != 0 {
			return lvl<<levelBits | bits.TrailingZeros64(b)
		}
	}
	panic("timers: wheel count out of sync")
}

// cascade moves the cursor to the start of slot (the earliest non-empty one)
// and files its timers again relative to the new cursor.
func (h *Heap) cascade(slot int) {
	h.cur = h.slotStart(slot)
	t := h.slots[slot]
	h.slots[slot] = nil
	h.bm[slot>>levelBits] &^= 1 << uint(slot&slotMask)
	for t != nil {
		next := t.next
		t.next, t.prev = nil, nil
		h.wcount--
		h.file(t)
		t = next
	}
}

// advance moves the cursor to tick, cascading every slot that starts at or
// before it, so that every timer with a tick <= tick is in the exact heap.
func (h *Heap) advance(tick int64) {
	for h.wcount > 0 {
		slot := h.earliest()
		if h.slotStart(slot) > tick {
			break
		}
		h.cascade(slot)
	}
	if tick > h.cur {
		h.cur = tick
	}
}
