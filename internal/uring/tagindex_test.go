package uring

import (
	"math/rand/v2"
	"testing"

	"github.com/ringloop/ringloop/internal/driver"
)

// TestTagIndexMatchesMap: random puts and deletes agree with a Go map,
// across growth and long probe runs (tags that share low bits).
func TestTagIndexMatchesMap(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	m := newTagIndex(4)
	ref := map[driver.Tag]int32{}
	var keys []driver.Tag
	for i := 0; i < 200000; i++ {
		switch op := r.IntN(10); {
		case op < 5 || len(keys) == 0:
			k := driver.Tag(r.Uint64()>>1) &^ 0xffff // clustered low bits
			if r.IntN(2) == 0 {
				k = driver.Tag(r.IntN(5000))
			}
			v := int32(r.IntN(1 << 30))
			if _, ok := ref[k]; !ok {
				keys = append(keys, k)
			}
			m.put(k, v)
			ref[k] = v
		default:
			j := r.IntN(len(keys))
			k := keys[j]
			keys[j] = keys[len(keys)-1]
			keys = keys[:len(keys)-1]
			m.del(k, ref[k])
			delete(ref, k)
		}
		if i%997 == 0 {
			if m.len() != len(ref) {
				t.Fatalf("step %d: len %d, want %d", i, m.len(), len(ref))
			}
			for k, v := range ref {
				if got, ok := m.get(k); !ok || got != v {
					t.Fatalf("step %d: get(%d) = %d, %v; want %d", i, k, got, ok, v)
				}
			}
		}
	}
	for _, k := range keys {
		m.del(k, ref[k])
	}
	if m.len() != 0 {
		t.Fatalf("len %d after deleting everything", m.len())
	}
}

// TestTagIndexDelChecksValue: deleting a tag that a newer op has taken
// over leaves the newer mapping alone.
func TestTagIndexDelChecksValue(t *testing.T) {
	m := newTagIndex(4)
	m.put(7, 1)
	m.put(7, 2)
	m.del(7, 1)
	if v, ok := m.get(7); !ok || v != 2 {
		t.Fatalf("get(7) = %d, %v; want 2", v, ok)
	}
	if _, ok := m.get(8); ok {
		t.Fatal("get of an absent tag succeeded")
	}
}

// TestTagIndexSteadyStateAllocs: a put and a delete of ever-new tags at a
// constant population allocate nothing.
func TestTagIndexSteadyStateAllocs(t *testing.T) {
	m := newTagIndex(1024)
	next := driver.Tag(0)
	for ; next < 500; next++ {
		m.put(next, int32(next))
	}
	old := driver.Tag(0)
	a := testing.AllocsPerRun(10000, func() {
		m.put(next, 1)
		next++
		m.del(old, int32(old))
		old++
	})
	if a != 0 {
		t.Fatalf("%v allocations per put+del", a)
	}
}
