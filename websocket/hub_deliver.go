package websocket

import (
	"sync"
	"sync/atomic"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/tasks"
)

// hubLoop is a hub's members on one loop and the broadcasts queued for
// them.
type hubLoop struct {
	hub   *Hub
	loop  *engine.Loop
	count atomic.Int64 // len(members) without holes, for Broadcast

	// Loop only.
	members   []*hubMember
	holes     int        // nil slots left by a Remove during delivery
	iterating bool       // members are being iterated
	sender    *hubMember // the member whose OnMessage is running
	paused    []*hubMember
	overN     int  // members over their high watermark within their grace
	checking  bool // the slow-consumer check is scheduled
	check     func()
	run       func() // Run, for the timers

	// Under hub.cmu.
	wantWake     bool // paused has members: wake them when the congestion clears
	resumeQueued bool // the resume task is queued on the loop

	// The frames the drain task is delivering (loop only): batch[next:]
	// are still due.
	batch []*hubFrame
	next  int

	// mu guards the queue between Broadcast and the loop's drain.
	mu      sync.Mutex
	pending []*hubFrame // swapped with batch once it is delivered
	bytes   int         // frame bytes in pending
	queued  bool        // the drain task is queued on the loop
	full    bool        // pending is past the backlog: counted in hub.full
}

func newHubLoop(h *Hub, l *engine.Loop) *hubLoop {
	hl := &hubLoop{hub: h, loop: l}
	hl.check, hl.run = hl.checkSlow, hl.Run
	return hl
}

// over reports whether the queue is past the backlog (under mu).
func (hl *hubLoop) over() bool {
	return len(hl.pending) >= hl.hub.cfg.backlog || hl.bytes >= hl.hub.cfg.backlogBytes
}

// enqueue queues f for the loop's members and, unless it is queued
// already, the task that delivers them. Called under hub.mu.
func (hl *hubLoop) enqueue(f *hubFrame) error {
	hl.mu.Lock()
	hl.pending = append(hl.pending, f)
	hl.bytes += len(f.plain)
	first := !hl.queued
	hl.queued = true
	if !hl.full && hl.over() {
		hl.full = true
		hl.hub.addStall(&hl.hub.full, 1)
	}
	hl.mu.Unlock()
	if !first {
		return nil
	}
	if err := hl.loop.Execute(hl); err != nil {
		// No drain is queued, and hub.mu keeps other broadcasts out:
		// f is the only frame pending.
		hl.mu.Lock()
		clear(hl.pending)
		hl.pending, hl.bytes, hl.queued = hl.pending[:0], 0, false
		cleared := hl.unfull()
		hl.mu.Unlock()
		if cleared {
			hl.hub.wake()
		}
		return err
	}
	return nil
}

// unfull ends the loop's part in the congestion once its queue is back
// under the backlog (under mu); true when the hub is then clear.
func (hl *hubLoop) unfull() bool {
	if !hl.full || hl.over() {
		return false
	}
	hl.full = false
	return hl.hub.addStall(&hl.hub.full, -1)
}

// abandon forgets the backlog of a loop that has shut down (under hub.mu):
// it will never drain, and must not keep the hub congested.
func (hl *hubLoop) abandon() {
	hl.mu.Lock()
	cleared := false
	if hl.full {
		hl.full = false
		cleared = hl.hub.addStall(&hl.hub.full, -1)
	}
	hl.mu.Unlock()
	if cleared {
		hl.hub.wake()
	}
}

// hubBudget is about how many member writes one drain task makes before
// it lets the loop do its other work (I/O, timers, other tasks) and queues
// itself again: a burst to many members is delivered in slices of a few
// hundred kilobytes rather than one long task that blocks the loop.
const hubBudget = 4096

// Run is the drain task: it delivers the queued broadcasts on the loop,
// hubBudget member writes at a time.
func (hl *hubLoop) Run() {
	if hl.next == len(hl.batch) {
		hl.mu.Lock()
		clear(hl.batch)
		hl.batch, hl.pending, hl.bytes = hl.pending, hl.batch[:0], 0
		hl.mu.Unlock()
		hl.next = 0
	}
	dropped, writes := 0, 0
	hl.iterating = true
	for hl.next < len(hl.batch) && writes < hubBudget {
		f := hl.batch[hl.next]
		hl.batch[hl.next] = nil
		hl.next++
		dropped += hl.deliver(f)
		writes += len(hl.members)
		f.release()
	}
	hl.iterating = false
	if hl.holes > 0 {
		hl.compact()
	}
	if dropped > 0 {
		hl.hub.dropped.Add(uint64(dropped))
	}
	hl.mu.Lock()
	more := hl.next < len(hl.batch) || len(hl.pending) > 0
	hl.queued = more
	// What was written is counted (members over their watermark): the
	// congestion is not cleared in between.
	cleared := hl.unfull()
	hl.mu.Unlock()
	if cleared {
		hl.hub.wake()
	}
	if more {
		hl.again()
	}
}

// again queues the drain task for what is left: on the task ring, or if
// it is full on the loop's timers; a loop that refuses both is shutting
// down, closing its members, and what they miss is counted in Stats' Dropped.
func (hl *hubLoop) again() {
	if hl.loop.Execute(hl) == nil {
		return
	}
	if _, err := hl.loop.Schedule(tasks.Func(hl.run), 0); err == nil {
		return
	}
	hl.drop()
}

// drop gives back the frames of a loop that will not deliver them.
func (hl *hubLoop) drop() {
	missed := len(hl.batch) - hl.next
	for _, f := range hl.batch[hl.next:] {
		f.release()
	}
	clear(hl.batch)
	hl.batch, hl.next = hl.batch[:0], 0
	hl.mu.Lock()
	missed += len(hl.pending)
	for _, f := range hl.pending {
		f.release()
	}
	clear(hl.pending)
	hl.pending, hl.bytes, hl.queued = hl.pending[:0], 0, false
	cleared := hl.unfull()
	hl.mu.Unlock()
	hl.hub.dropped.Add(uint64(missed * int(hl.count.Load())))
	if cleared {
		hl.hub.wake()
	}
}

// deliver writes f to every member and returns how many missed it (slow
// ones their policy skips). A member's Write may turn it over its high
// watermark, which the hub counts (writability) but still writes to: it is
// skipped only once its policy has acted. Removals during the delivery
// leave holes: the slots are read afresh.
func (hl *hubLoop) deliver(f *hubFrame) (dropped int) {
	n := len(hl.members)
	for i := 0; i < n && i < len(hl.members); i++ {
		m := hl.members[i]
		if m == nil {
			continue
		}
		c := m.c
		if c.closeSent || c.closeDone {
			continue
		}
		if m.slow {
			dropped++
			continue
		}
		if c.wr.open {
			// A fragmented message is being sent: the frame waits with
			// the member's async frames until it ends.
			if c.holdFrame(f) != nil {
				dropped++
			}
			continue
		}
		if c.client { // a client masks each frame with a key of its own
			_ = c.writeFrame(f.op, f.plain[f.hdr:])
			continue
		}
		_ = c.write(f.frameFor(c)) // fails only once closing: nothing to deliver
	}
	return dropped
}

// frameFor returns the encoded frame for a server member.
func (f *hubFrame) frameFor(c *Conn) []byte {
	if c.deflate && f.deflated != nil {
		return f.deflated
	}
	return f.plain
}

// holdFrame queues f for a member that is sending a fragmented message: it
// goes through the async writes the message holds back, bounded by the
// async write limit (past it the member misses f).
func (c *Conn) holdFrame(f *hubFrame) error {
	if c.client {
		return c.asyncFrame(f.op, f.plain[f.hdr:])
	}
	c.usedAsync.Store(true) // the close frame goes behind it
	return c.ec.AsyncWrite(f.frameFor(c))
}

// compact closes the holes Remove left during a delivery.
func (hl *hubLoop) compact() {
	j := 0
	for _, m := range hl.members {
		if m == nil {
			continue
		}
		hl.members[j] = m
		m.idx = j
		j++
	}
	clear(hl.members[j:])
	hl.members = hl.members[:j]
	hl.holes = 0
}

// hubFrame is one broadcast's encoded frame, shared read-only by the loops
// it was queued on; the last to deliver it gives it back to the pool.
type hubFrame struct {
	refs     atomic.Int32
	plain    []byte
	op       opcode
	hdr      int     // the length of plain's header: plain[hdr:] is the payload
	deflated []byte  // the compressed frame, when a member negotiated deflate
	dbuf     *[]byte // deflated's pooled buffer
}

var hubFramePool = sync.Pool{New: func() any { return new(hubFrame) }}

func newHubFrame(op opcode, p []byte, deflate bool) *hubFrame {
	f := hubFramePool.Get().(*hubFrame)
	f.plain = appendHeader(f.plain[:0], true, op, len(p), false, [4]byte{})
	f.op, f.hdr = op, len(f.plain)
	f.plain = append(f.plain, p...)
	if deflate && len(p) >= compressThreshold {
		f.dbuf, f.deflated = deflatedFrame(op, p, false, [4]byte{})
	}
	return f
}

// release drops one loop's reference; the last one recycles the frame.
func (f *hubFrame) release() {
	if f.refs.Add(-1) != 0 {
		return
	}
	if f.dbuf != nil {
		putFrame(f.dbuf)
		f.dbuf, f.deflated = nil, nil
	}
	if cap(f.plain) > maxPooledFrame {
		f.plain = nil
	}
	hubFramePool.Put(f)
}
