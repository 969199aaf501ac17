package timers

// The exact heap: a binary min-heap ordered by (deadline, seq) holding every
// timer whose tick is at or before the wheel cursor. Each timer stores its
// index, so removal is O(log k) (Netty's DefaultPriorityQueue). k is small: the
// timers due in the current tick plus those armed before the cursor.

func (h *Heap) heapPush(t *Timer) {
	t.loc = locHeap
	t.index = int32(len(h.near))
	h.near = append(h.near, t)
	h.siftUp(int(t.index))
}

// heapRemove takes t out of the exact heap.
func (h *Heap) heapRemove(t *Timer) {
	i := int(t.index)
	last := len(h.near) - 1
	if i != last {
		moved := h.near[last]
		h.near[i] = moved
		moved.index = int32(i)
	}
	h.near[last] = nil // let the GC free what the caller drops
	h.near = h.near[:last]
	if i != last {
		h.fixAt(i)
	}
	t.loc = locIdle
	h.maybeShrink()
}

// fixAt restores heap order after the element at i changed its key.
func (h *Heap) fixAt(i int) {
	if !h.siftDown(i) {
		h.siftUp(i)
	}
}

func (h *Heap) siftUp(i int) {
	q := h.near
	t := q[i]
	for i > 0 {
		p := (i - 1) / 2
		if !before(t, q[p]) {
			break
		}
		q[i] = q[p]
		q[i].index = int32(i)
		i = p
	}
	q[i] = t
	t.index = int32(i)
}

// siftDown moves the element at i down; it reports whether it moved.
func (h *Heap) siftDown(i0 int) bool {
	q := h.near
	n := len(q)
	t := q[i0]
	i := i0
	for {
		c := 2*i + 1
		if c >= n {
			break
		}
		if r := c + 1; r < n && before(q[r], q[c]) {
			c = r
		}
		if !before(q[c], t) {
			break
		}
		q[i] = q[c]
		q[i].index = int32(i)
		i = c
	}
	q[i] = t
	t.index = int32(i)
	return i > i0
}

// maybeShrink gives memory back after a burst: the heap never keeps more than
// four times the room it needs beyond a small floor.
func (h *Heap) maybeShrink() {
	if c := cap(h.near); c > 256 && len(h.near) < c/4 {
		q := make([]*Timer, len(h.near), c/2)
		copy(q, h.near)
		h.near = q
	}
}
