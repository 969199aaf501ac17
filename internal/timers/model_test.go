package timers

import (
	"encoding/binary"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/ringloop/ringloop/tasks"
)

// The model test drives a Heap and a plain sorted slice with the same random
// operations and requires the same firing sequence, the same NextDeadline and
// the same pending set.

// source yields the model's choices: pseudo-random, or fuzz bytes.
type source interface {
	// n returns a value in [0, max); max > 0.
	n(max uint64) uint64
	// exhausted reports that a fuzz input is used up.
	exhausted() bool
}

type randSource struct{ r *rand.Rand }

func (s randSource) n(max uint64) uint64 { return s.r.Uint64N(max) }
func (s randSource) exhausted() bool     { return false }

type byteSource struct{ b []byte }

func (s *byteSource) n(max uint64) uint64 {
	var v uint64
	switch {
	case max <= 1<<8:
		if len(s.b) >= 1 {
			v = uint64(s.b[0])
			s.b = s.b[1:]
		}
	case max <= 1<<16:
		if len(s.b) >= 2 {
			v = uint64(binary.LittleEndian.Uint16(s.b))
			s.b = s.b[2:]
		} else {
			s.b = nil
		}
	default:
		if len(s.b) >= 8 {
			v = binary.LittleEndian.Uint64(s.b)
			s.b = s.b[8:]
		} else {
			s.b = nil
		}
	}
	return v % max
}
func (s *byteSource) exhausted() bool { return len(s.b) == 0 }

// refEntry is one pending timer of the reference.
type refEntry struct {
	id       int
	deadline int64
	seq      uint64
}

func refLess(a, b refEntry) int {
	switch {
	case a.deadline < b.deadline:
		return -1
	case a.deadline > b.deadline:
		return 1
	case a.seq < b.seq:
		return -1
	case a.seq > b.seq:
		return 1
	}
	return 0
}

// reference is the simple sorted model.
type reference struct {
	sorted []refEntry
	byID   map[int]refEntry
	seq    uint64
}

func (r *reference) stop(id int) bool {
	e, ok := r.byID[id]
	if !ok {
		return false
	}
	i, found := slices.BinarySearchFunc(r.sorted, e, refLess)
	if !found {
		panic("reference out of sync")
	}
	r.sorted = slices.Delete(r.sorted, i, i+1)
	delete(r.byID, id)
	return true
}

func (r *reference) start(id int, deadline int64) {
	r.stop(id)
	r.seq++
	e := refEntry{id: id, deadline: deadline, seq: r.seq}
	i, _ := slices.BinarySearchFunc(r.sorted, e, refLess)
	r.sorted = slices.Insert(r.sorted, i, e)
	r.byID[id] = e
}

func (r *reference) pollDue(now int64) []int {
	var out []int
	i := 0
	for i < len(r.sorted) && r.sorted[i].deadline <= now {
		out = append(out, r.sorted[i].id)
		delete(r.byID, r.sorted[i].id)
		i++
	}
	r.sorted = slices.Delete(r.sorted, 0, i)
	return out
}

// idTask identifies the timer that fired.
type idTask struct{ id int }

func (*idTask) Run() {}

// runModel runs ops operations (or until src is exhausted) and fails t at the
// first difference.
func runModel(t testing.TB, src source, ops int) {
	nTimers := 1 + int(src.n(512))
	if src.n(4) == 0 {
		nTimers = 1 + int(src.n(4096))
	}
	timers := make([]Timer, nTimers)
	for i := range timers {
		timers[i].Init(&idTask{id: i})
	}
	ref := &reference{byID: map[int]refEntry{}}
	now := int64(src.n(1 << 40))
	h := NewHeap(nil)
	h.SetClock(func() int64 { return now })
	var got []int
	collect := func(tk tasks.Task) { got = append(got, tk.(*idTask).id) }

	randDeadline := func() int64 {
		switch src.n(10) {
		case 0: // overdue
			return now - int64(src.n(10_000_000))
		case 1: // current tick
			return now + int64(src.n(1<<tickShift))
		case 2: // near
			return now + int64(src.n(100_000_000))
		case 3: // seconds
			return now + int64(src.n(10_000_000_000))
		case 4: // hours
			return now + int64(src.n(7_200_000_000_000))
		case 5: // years, up to the saturation point
			return DeadlineAfter(now, 1<<src.n(63))
		case 6:
			return Never
		case 7: // tie with a pending timer
			if len(ref.sorted) > 0 {
				return ref.sorted[src.n(uint64(len(ref.sorted)))].deadline
			}
			return now
		case 8: // tie with the current time or just after
			return now + int64(src.n(3))
		default: // the end of a tick or level boundary
			b := int64(1) << (tickShift + levelBits*src.n(4))
			return (now/b+1+int64(src.n(3)))*b - int64(src.n(2))
		}
	}

	for op := 0; op < ops && !src.exhausted(); op++ {
		switch k := src.n(100); {
		case k < 40: // arm or re-arm
			id := int(src.n(uint64(nTimers)))
			d := randDeadline()
			h.Start(&timers[id], d)
			ref.start(id, d)
		case k < 55: // re-arm a pending timer later (idle-timeout reset)
			if len(ref.sorted) == 0 {
				continue
			}
			e := ref.sorted[src.n(uint64(len(ref.sorted)))]
			d := e.deadline + int64(src.n(5_000_000_000))
			if d < e.deadline {
				d = Never
			}
			h.Start(&timers[e.id], d)
			ref.start(e.id, d)
		case k < 70: // stop
			id := int(src.n(uint64(nTimers)))
			want := ref.stop(id)
			if g := h.Stop(&timers[id]); g != want {
				t.Fatalf("op %d: Stop(%d) = %v, want %v", op, id, g, want)
			}
		case k < 90: // advance the clock and poll
			switch src.n(8) {
			case 0, 1, 2:
				now += int64(src.n(2_000_000))
			case 3, 4:
				now += int64(src.n(100_000_000))
			case 5:
				now += int64(src.n(20_000_000_000))
			case 6: // jump to the next deadline exactly
				if d, ok := h.NextDeadline(); ok && d > now {
					now = d
				}
			case 7:
				if src.n(16) == 0 {
					now += int64(src.n(1 << 50))
				}
			}
			got = got[:0]
			n := h.PollDue(now, collect)
			want := ref.pollDue(now)
			if n != len(got) || !slices.Equal(got, want) {
				t.Fatalf("op %d: PollDue(%d) fired %v (n=%d), want %v", op, now, got, n, want)
			}
		case k < 98: // exact next deadline
			d, ok := h.NextDeadline()
			if len(ref.sorted) == 0 {
				if ok {
					t.Fatalf("op %d: NextDeadline = %d, want none", op, d)
				}
			} else if !ok || d != ref.sorted[0].deadline {
				t.Fatalf("op %d: NextDeadline = %d,%v, want %d", op, d, ok, ref.sorted[0].deadline)
			}
		case k < 99: // pending set
			for id := range timers {
				e, ok := ref.byID[id]
				if timers[id].Pending() != ok || (ok && timers[id].Deadline() != e.deadline) {
					t.Fatalf("op %d: timer %d pending=%v deadline=%d, want %v %d",
						op, id, timers[id].Pending(), timers[id].Deadline(), ok, e.deadline)
				}
			}
		default:
			if src.n(50) == 0 {
				h.CancelAll()
				ref.sorted = ref.sorted[:0]
				clear(ref.byID)
			}
		}
		if h.Len() != len(ref.sorted) {
			t.Fatalf("op %d: Len = %d, want %d", op, h.Len(), len(ref.sorted))
		}
	}
	// Drain: everything fires in order at the end of time.
	got = got[:0]
	h.PollDue(Never, collect)
	if want := ref.pollDue(Never); !slices.Equal(got, want) {
		t.Fatalf("final drain fired %v, want %v", got, want)
	}
	if h.Len() != 0 || h.wcount != 0 || len(h.near) != 0 {
		t.Fatalf("after drain: Len=%d wheel=%d near=%d", h.Len(), h.wcount, len(h.near))
	}
}

func TestModelRandom(t *testing.T) {
	seeds := []uint64{1, 2, 3, 4}
	for _, seed := range seeds {
		src := randSource{rand.New(rand.NewPCG(seed, seed*7919))}
		runModel(t, src, modelOps/len(seeds))
	}
}

// maxFuzzModelBytes bounds a FuzzModel input (long random runs are
// TestModelRandom's job). It keeps every input fast: the fuzzer minimizes
// each new interesting input with a number of runs that grows with the
// square of its length, and 4 KiB inputs (or 512-byte ones, at up to 10 ms a
// run) took seconds of minimizing, during which no fuzzing happened.
const maxFuzzModelBytes = 128

func FuzzModel(f *testing.F) {
	f.Add([]byte{0})
	f.Add([]byte("timers: a short seed with a few arms, stops and polls......."))
	seed := make([]byte, maxFuzzModelBytes)
	r := rand.New(rand.NewPCG(9, 9))
	for i := range seed {
		seed[i] = byte(r.Uint32())
	}
	f.Add(seed)
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > maxFuzzModelBytes {
			t.Skip("longer than maxFuzzModelBytes")
		}
		runModel(t, &byteSource{b: data}, 1<<20)
	})
}
