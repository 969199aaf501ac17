package engine

// slotTable is a table of generation-tagged slots: the index and generation
// of a value's slot name it in a driver tag (see makeTag), and a slot's
// generation moves on when it is freed, so a late completion or message for
// its old owner is recognised as stale and never reaches the next one. Freed
// slots are reused, last freed first, so the table stays as large as the
// most values it held at once.
//
// One table type serves both uses: a loop's registrations (registry.go,
// loop-only) and the listeners that send hand-offs to a loop (handoff.go,
// under that loop's inbox lock). It has no lock of its own.
type slotTable[T any] struct {
	slots []slot[T]
	free  []uint32
	live  int
}

type slot[T any] struct {
	gen  uint32
	used bool
	v    T
}

// add stores v and returns its slot and generation.
func (t *slotTable[T]) add(v T) (idx, gen uint32) {
	if n := len(t.free); n > 0 {
		idx = t.free[n-1]
		t.free = t.free[:n-1]
	} else {
		idx = uint32(len(t.slots))
		t.slots = append(t.slots, slot[T]{})
	}
	s := &t.slots[idx]
	s.v, s.used = v, true
	t.live++
	return idx, s.gen
}

// remove frees the slot (idx, gen) and returns what it held; a stale or
// free slot is left alone (ok false).
func (t *slotTable[T]) remove(idx, gen uint32) (v T, ok bool) {
	if v, ok = t.get(idx, gen); !ok {
		return v, false
	}
	s := &t.slots[idx]
	var zero T
	s.v, s.used = zero, false
	s.gen = (s.gen + 1) & tagGenMask
	t.free = append(t.free, idx)
	t.live--
	return v, true
}

// get returns the value of slot (idx, gen), ok false for a stale tag.
func (t *slotTable[T]) get(idx, gen uint32) (v T, ok bool) {
	if int(idx) < len(t.slots) {
		if s := &t.slots[idx]; s.gen == gen && s.used {
			return s.v, true
		}
	}
	return v, false
}

// each calls fn for every value held (fn may remove values).
func (t *slotTable[T]) each(fn func(T)) {
	for i := range t.slots {
		if s := &t.slots[i]; s.used {
			fn(s.v)
		}
	}
}
