package taskq

import "testing"

// idTask is a task that carries a number, to compare queues with a model.
type idTask struct{ id int }

func (*idTask) Run() {}

// maxFuzzOps bounds a FuzzQueue input. It is enough to fill the bounded ring
// and cross many chunks of the small unbounded ones, and it keeps every input
// fast: the fuzzer minimizes each new interesting input with a number of runs
// that grows with the square of its length, and 300-byte inputs took seconds
// of minimizing, during which no fuzzing happened.
const maxFuzzOps = 96

// FuzzQueue drives every queue kind with a sequence of offers and polls from
// fuzz bytes and compares it with a slice: same accepted offers, same order,
// same Len once quiescent.
func FuzzQueue(f *testing.F) {
	f.Add([]byte{0, 0, 0, 1, 1, 0, 1, 1, 1})
	f.Add(make([]byte, maxFuzzOps))
	f.Fuzz(func(t *testing.T, ops []byte) {
		if len(ops) > maxFuzzOps {
			t.Skip("longer than maxFuzzOps")
		}
		ids := make([]idTask, len(ops)) // one allocation for every offer
		for i := range ids {
			ids[i].id = i
		}
		for _, mk := range []struct {
			name string
			q    func() Queue
			cap  int
		}{
			{"bounded16", func() Queue { return NewBounded(16) }, 16},
			{"unbounded2", func() Queue { return NewUnbounded(2) }, -1},
			{"unbounded4", func() Queue { return NewUnbounded(4) }, -1},
		} {
			q := mk.q()
			var model []int
			next := 0
			for _, op := range ops {
				if op%3 != 0 { // offer (twice as often as poll)
					ok := q.Offer(&ids[next])
					want := mk.cap < 0 || len(model) < mk.cap
					if ok != want {
						t.Fatalf("%s: offer %d = %v with %d queued", mk.name, next, ok, len(model))
					}
					if ok {
						model = append(model, next)
					}
					next++
					continue
				}
				got := q.Poll()
				if len(model) == 0 {
					if got != nil {
						t.Fatalf("%s: poll on empty returned %v", mk.name, got)
					}
					continue
				}
				if got == nil || got.(*idTask).id != model[0] {
					t.Fatalf("%s: poll = %v, want %d", mk.name, got, model[0])
				}
				model = model[1:]
			}
			for _, want := range model {
				got := q.Poll()
				if got == nil || got.(*idTask).id != want {
					t.Fatalf("%s: drain = %v, want %d", mk.name, got, want)
				}
			}
			if q.Poll() != nil || q.Len() != 0 {
				t.Fatalf("%s: not empty after drain (Len %d)", mk.name, q.Len())
			}
		}
	})
}
