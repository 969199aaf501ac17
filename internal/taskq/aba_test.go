package taskq

import (
	"sync/atomic"
	"testing"

	"github.com/ringloop/ringloop/tasks"
)

// A gate stops the first producer that reaches a hook point while armed,
// so a test can replay the ABA hazards of chunk recycling deterministically:
// a producer holds a chunk pointer while the chunk is drained, retired,
// recycled and relinked under it.
type gate struct {
	point   int
	armed   atomic.Bool
	reached chan struct{}
	release chan struct{}
}

func newGate(q *chunked, point int) *gate {
	g := &gate{point: point, reached: make(chan struct{}), release: make(chan struct{})}
	q.hook = func(pt int) {
		if pt == g.point && g.armed.CompareAndSwap(true, false) {
			close(g.reached)
			<-g.release
		}
	}
	return g
}

// stall starts a producer offering x that stops at the gate; the returned
// channel closes when its Offer returns.
func (g *gate) stall(q Queue, x tasks.Task) <-chan struct{} {
	g.armed.Store(true)
	done := make(chan struct{})
	go func() {
		defer close(done)
		q.Offer(x)
	}()
	<-g.reached
	return done
}

// cycle offers and polls k tasks one by one, checking each comes back.
func cycle(t *testing.T, q Queue, k int) {
	t.Helper()
	for i := range k {
		x := &item{k: int32(i)}
		must(t, q.Offer(x), "Offer refused")
		eq(t, q.Poll(), tasks.Task(x), "cycled task")
	}
}

// TestStaleFastPath: a producer loaded pIndex and pb, then stalled while its
// chunk was retired and recycled: left among the spares, or relinked with a
// new base as the producers' chunk again. Its claim must land in the right
// chunk, exactly once.
func TestStaleFastPath(t *testing.T) {
	for _, relinked := range []bool{false, true} {
		q := newChunked(2, 0, 0)
		g := newGate(q, hookFastPath)
		c0 := q.pb.Load()
		victim := &item{k: -1}
		done := g.stall(q, victim)

		for {
			cycle(t, q, 1)
			must(t, q.ci < 10000, "c0 never reached the wanted state")
			if relinked && q.pb.Load() == c0 && c0.base.Load() != 0 {
				break
			}
			if !relinked && spared(q, c0) {
				break
			}
		}
		x := &item{k: 1}
		q.Offer(x) // a task queued before the victim's
		close(g.release)
		<-done
		eq(t, q.Poll(), tasks.Task(x), "task queued before the victim's claim")
		eq(t, q.Poll(), tasks.Task(victim), "victim's task")
		eq(t, q.Poll(), nil, "nothing else")
		cycle(t, q, 100)
	}
}

// spared reports whether c sits among q's spare chunks.
func spared(q *chunked, c *chunk) bool {
	for i := range q.spares {
		if q.spares[i].Load() == c {
			return true
		}
	}
	return false
}

// TestPinnedChunkNotRecycled: a producer stalled in advance holds a pin on
// its chunk; the consumer must not recycle that chunk until it unpins.
func TestPinnedChunkNotRecycled(t *testing.T) {
	q := newChunked(2, 0, 0)
	g := newGate(q, hookPinned)
	c0 := q.pb.Load()
	a, b := &item{k: 0}, &item{k: 1}
	q.Offer(a)
	q.Offer(b) // c0 is full: the next Offer goes through advance(c0)
	victim := &item{k: -1}
	done := g.stall(q, victim)
	eq(t, c0.pins.Load(), int64(1), "victim pinned c0")

	eq(t, q.Poll(), tasks.Task(a), "first")
	eq(t, q.Poll(), tasks.Task(b), "second")
	cycle(t, q, 200) // links a successor, retires c0, cycles many chunks
	eq(t, c0.base.Load(), uint64(0), "pinned chunk was relinked")
	must(t, len(q.limbo) == 1 && q.limbo[0] == c0, "pinned chunk not in limbo: %v", q.limbo)
	must(t, !spared(q, c0), "pinned chunk among the spares")

	close(g.release)
	<-done
	eq(t, c0.pins.Load(), int64(0), "victim unpinned")
	eq(t, q.Poll(), tasks.Task(victim), "victim's task")
	cycle(t, q, 20)
	eq(t, len(q.limbo), 0, "limbo emptied")
	for q.pb.Load() != c0 {
		cycle(t, q, 1)
		must(t, q.ci < 10000, "c0 was never reused after unpinning")
	}
}

// TestLateLinker: a producer stalled just before linking a successor to a
// full chunk; others link one meanwhile. Its late CAS must fail and its
// spare chunk must not be linked anywhere.
func TestLateLinker(t *testing.T) {
	q := newChunked(2, 0, 0)
	g := newGate(q, hookLink)
	c0 := q.pb.Load()
	q.Offer(&item{})
	q.Offer(&item{})
	victim := &item{k: -1}
	done := g.stall(q, victim)
	x := &item{k: 7}
	q.Offer(x) // links c1 after c0 while the victim waits
	c1 := c0.next.Load()
	must(t, c1 != nil, "no successor linked")
	q.Poll()
	q.Poll()
	eq(t, q.Poll(), tasks.Task(x), "task in c1")
	cycle(t, q, 50)

	close(g.release)
	<-done
	eq(t, q.Poll(), tasks.Task(victim), "victim's task")
	eq(t, q.Poll(), nil, "nothing else")
	cycle(t, q, 50)
	eq(t, q.Poll(), nil, "empty")
	eq(t, q.Len(), 0, "Len")
}

// TestStaleAdvance calls the slow path with chunks in every stale state:
// retired and spare, relinked and current but not full. It must change
// nothing.
func TestStaleAdvance(t *testing.T) {
	q := newChunked(2, 0, 0)
	c0 := q.pb.Load()
	cycle(t, q, 4) // c0 retired
	must(t, spared(q, c0), "c0 not recycled")
	pb, next := q.pb.Load(), c0.next.Load()
	q.advance(c0)
	eq(t, q.pb.Load(), pb, "pb after stale advance")
	eq(t, c0.next.Load(), next, "spare chunk's next after stale advance")

	for q.pb.Load() != c0 {
		cycle(t, q, 1)
	}
	// c0 is current again; make it hold one task, not full.
	x := &item{}
	for q.pIndex.Load()-c0.base.Load() != 1 {
		cycle(t, q, 1)
		must(t, q.pb.Load() == c0, "c0 moved on before it held one task")
	}
	q.advance(c0)
	eq(t, c0.next.Load(), (*chunk)(nil), "advance linked a successor to a chunk that is not full")
	eq(t, q.pb.Load(), c0, "pb moved off a chunk that is not full")
	q.Offer(x)
	eq(t, q.Poll(), tasks.Task(x), "task after stale advance")
}
