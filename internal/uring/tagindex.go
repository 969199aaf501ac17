package uring

import "github.com/ringloop/ringloop/internal/driver"

// tagIndex maps the tags of live ops to their slots, so that Cancel can find
// an op by tag. It is an open-addressing table with linear probing and
// backward-shift deletion: no tombstones, so a steady state of inserts and
// deletes never allocates (a map[driver.Tag]int32 would, now and then).
type tagIndex struct {
	keys  []driver.Tag
	vals  []int32 // -1: empty
	n     int
	shift uint // 64 - log2(len(keys))
	mask  int
}

func newTagIndex(capacity int) tagIndex {
	size := 16
	for size*3 < capacity*4 {
		size *= 2
	}
	var m tagIndex
	m.alloc(size)
	return m
}

func (m *tagIndex) alloc(size int) {
	m.keys = make([]driver.Tag, size)
	m.vals = make([]int32, size)
	for i := range m.vals {
		m.vals[i] = -1
	}
	m.mask = size - 1
	bits := uint(0)
	for 1<<bits < size {
		bits++
	}
	m.shift = 64 - bits
	m.n = 0
}

func (m *tagIndex) home(t driver.Tag) int {
	return int((uint64(t) * 0x9E3779B97F4A7C15) >> m.shift)
}

// get returns the slot of t.
func (m *tagIndex) get(t driver.Tag) (int32, bool) {
	for i := m.home(t); ; i = (i + 1) & m.mask {
		v := m.vals[i]
		if v < 0 {
			return -1, false
		}
		if m.keys[i] == t {
			return v, true
		}
	}
}

// put maps t to v, replacing an earlier mapping of t.
func (m *tagIndex) put(t driver.Tag, v int32) {
	if (m.n+1)*4 > len(m.keys)*3 {
		m.grow()
	}
	for i := m.home(t); ; i = (i + 1) & m.mask {
		if m.vals[i] < 0 {
			m.keys[i], m.vals[i] = t, v
			m.n++
			return
		}
		if m.keys[i] == t {
			m.vals[i] = v
			return
		}
	}
}

func (m *tagIndex) grow() {
	keys, vals := m.keys, m.vals
	m.alloc(len(keys) * 2)
	for i, v := range vals {
		if v >= 0 {
			m.put(keys[i], v)
		}
	}
}

// del removes t if it maps to v (a newer op may have taken the tag over).
func (m *tagIndex) del(t driver.Tag, v int32) {
	i := m.home(t)
	for ; ; i = (i + 1) & m.mask {
		if m.vals[i] < 0 {
			return
		}
		if m.keys[i] == t {
			if m.vals[i] != v {
				return
			}
			break
		}
	}
	// Backward-shift: move later entries of the probe run into the hole
	// unless that would put them before their home slot.
	for {
		m.vals[i] = -1
		j := i
		for {
			j = (j + 1) & m.mask
			if m.vals[j] < 0 {
				m.n--
				return
			}
			h := m.home(m.keys[j])
			if (i <= j && (h <= i || h > j)) || (i > j && h <= i && h > j) {
				m.keys[i], m.vals[i] = m.keys[j], m.vals[j]
				i = j
				break
			}
		}
	}
}

// len reports how many tags are mapped.
func (m *tagIndex) len() int { return m.n }
