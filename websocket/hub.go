package websocket

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/ringloop/ringloop/engine"
)

// Hub is a set of connections, possibly on many loops of a group, that
// Broadcast sends one message to. Members are kept per loop: a broadcast
// encodes the frame once, and each loop holding members gets one task that
// writes it to all of them, so its cost off the loops does not grow with
// the number of connections and nothing is locked per connection.
//
// Slow members follow their WithSlowConsumer policy. CloseSlow: the member
// is dropped once its unsent bytes pass the engine's high watermark, as
// for any write. PauseReading: the hub is a producer that checks Writable,
// so a member past the high watermark misses broadcasts until its output
// drains under the low watermark; Dropped counts the messages missed. A
// member therefore never holds more than the high watermark and one frame
// of broadcasts.
//
// A member sending a fragmented message (NextWriter) gets a broadcast after
// that message, with its AsyncWriteMessage frames: they are held within its
// async write limit, and past it the member misses the broadcast, counted
// in Dropped too.
//
// Compression: when a member negotiated permessage-deflate, a message of 64
// bytes or more is deflated once per broadcast and the compressed frame is
// shared by every such member (no context takeover makes each message a
// stream of its own); the others get the uncompressed frame.
//
// A zero Hub is not usable: use NewHub.
type Hub struct {
	// mu orders broadcasts, so every member sees them in one order, and
	// serializes adding a loop to loops.
	mu      sync.Mutex
	loops   atomic.Pointer[[]*hubLoop] // one per loop that held a member; copied on change
	targets []*hubLoop                 // Broadcast's scratch, under mu

	n        atomic.Int64  // members
	deflated atomic.Int64  // members that negotiated permessage-deflate
	dropped  atomic.Uint64 // messages PauseReading members missed
}

// Limits of what broadcasts may queue on one loop before it delivers them:
// past either, Broadcast returns ErrHubBacklog.
const (
	// HubMaxPending is the most broadcasts queued on one loop.
	HubMaxPending = 1024
	// HubMaxPendingBytes is the most frame bytes queued on one loop; a
	// larger single message is still accepted on a loop with nothing
	// queued.
	HubMaxPendingBytes = 32 << 20
)

// ErrHubBacklog is Broadcast's answer, sending nothing, when a loop has not
// yet delivered HubMaxPending broadcasts or HubMaxPendingBytes of them: the
// producer outruns the loops. It wraps engine.ErrRejected.
var ErrHubBacklog = fmt.Errorf("websocket: broadcasts queued on a loop past the hub's limit: %w", engine.ErrRejected)

// NewHub returns an empty hub.
func NewHub() *Hub { return &Hub{} }

// hubLoop is a hub's members on one loop and the broadcasts queued for
// them.
type hubLoop struct {
	hub   *Hub
	loop  *engine.Loop
	count atomic.Int64 // len(members) without holes, for Broadcast

	// Loop only.
	members    []*Conn
	holes      int  // nil slots left by a Remove during delivery
	delivering bool // members are being iterated

	// mu guards the queue between Broadcast and the loop's drain.
	mu      sync.Mutex
	pending []*hubFrame
	spare   []*hubFrame // the previous batch's slice, reused
	bytes   int         // frame bytes in pending
	queued  bool        // the drain task is queued on the loop
}

// hubRef is one membership of a connection: its slot in a hub's loop.
type hubRef struct {
	hl  *hubLoop
	idx int
}

// Len returns the number of members; safe from any goroutine.
func (h *Hub) Len() int { return int(h.n.Load()) }

// Dropped returns how many messages members missed: PauseReading members
// that were not writable when a broadcast reached them, and members whose
// frames held behind a fragmented message filled their async write limit.
func (h *Hub) Dropped() uint64 { return h.dropped.Load() }

// Add makes c a member. Call it on c's loop, typically in OnOpen; off the
// loop it hands itself to the loop. A connection that is closing is not
// added, and a member leaves by itself when it closes (before its OnClose).
// Adding a member twice has no effect.
func (h *Hub) Add(c *Conn) {
	l := c.t.ec.Loop()
	if !l.InEventLoop() {
		_ = l.ExecuteFunc(func() { h.Add(c) }) // fails only when the loop is gone, and c with it
		return
	}
	if c.ended || c.closeSent || c.closeDone {
		return
	}
	for _, r := range c.hubs {
		if r.hl.hub == h {
			return
		}
	}
	hl := h.loopFor(l)
	c.hubs = append(c.hubs, hubRef{hl, len(hl.members)})
	hl.members = append(hl.members, c)
	hl.count.Add(1)
	h.n.Add(1)
	if c.deflate {
		h.deflated.Add(1)
	}
}

// Remove takes c out of the hub; it is not an error if c is not a member.
// Call it on c's loop (OnClose, OnMessage...); off the loop it hands
// itself to the loop.
func (h *Hub) Remove(c *Conn) {
	l := c.t.ec.Loop()
	if !l.InEventLoop() {
		_ = l.ExecuteFunc(func() { h.Remove(c) })
		return
	}
	for i, r := range c.hubs {
		if r.hl.hub == h {
			c.leave(i)
			return
		}
	}
}

// loopFor returns the hub's members on l, adding them the first time.
func (h *Hub) loopFor(l *engine.Loop) *hubLoop {
	if ls := h.loops.Load(); ls != nil {
		for _, hl := range *ls {
			if hl.loop == l {
				return hl
			}
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	var old []*hubLoop
	if ls := h.loops.Load(); ls != nil {
		old = *ls
		for _, hl := range old {
			if hl.loop == l {
				return hl
			}
		}
	}
	hl := &hubLoop{hub: h, loop: l}
	ls := append(append(make([]*hubLoop, 0, len(old)+1), old...), hl)
	h.loops.Store(&ls)
	return hl
}

// leave removes c's i-th membership (on the loop).
func (c *Conn) leave(i int) {
	r := c.hubs[i]
	last := len(c.hubs) - 1
	c.hubs[i] = c.hubs[last]
	c.hubs[last] = hubRef{}
	c.hubs = c.hubs[:last]
	hl := r.hl
	hl.count.Add(-1)
	hl.hub.n.Add(-1)
	if c.deflate {
		hl.hub.deflated.Add(-1)
	}
	if hl.delivering {
		hl.members[r.idx] = nil
		hl.holes++
		return
	}
	end := len(hl.members) - 1
	if r.idx != end {
		m := hl.members[end]
		hl.members[r.idx] = m
		m.setHubSlot(hl, r.idx)
	}
	hl.members[end] = nil
	hl.members = hl.members[:end]
}

// leaveHubs ends every membership of a closed connection.
func (c *Conn) leaveHubs() {
	for len(c.hubs) > 0 {
		c.leave(len(c.hubs) - 1)
	}
	c.hubs = nil
}

// setHubSlot records that c moved to slot idx of hl.members.
func (c *Conn) setHubSlot(hl *hubLoop, idx int) {
	for i := range c.hubs {
		if c.hubs[i].hl == hl {
			c.hubs[i].idx = idx
			return
		}
	}
}

// Broadcast sends p as one message of kind to every member, from any
// goroutine or loop; p may be reused once it returns. The frame is built
// once and queued on each loop holding members, in the same order for
// every loop (Broadcast calls are serialized), so all members see the
// broadcasts in one order. A member that is closing is skipped.
//
// It returns ErrHubBacklog, sending nothing, when a loop has too many
// broadcasts not yet delivered; engine.ErrShutdown when every loop that
// held members has shut down. When some loops refused the task (shut
// down, or a bounded task ring full) and others took it, the error says
// how many missed it and wraps the first cause.
func (h *Hub) Broadcast(kind MessageKind, p []byte) error {
	if kind != Text && kind != Binary {
		return errBadKind
	}
	ls := h.loops.Load()
	if ls == nil {
		return nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	targets := h.targets[:0]
	down := 0
	size := len(p) + maxHeader
	for _, hl := range *ls {
		switch {
		case hl.loop.State() >= engine.Shutdown:
			down++
		case hl.count.Load() > 0:
			if hl.full(size) {
				h.targets = targets[:0]
				return ErrHubBacklog
			}
			targets = append(targets, hl)
		}
	}
	h.targets = targets[:0]
	if len(targets) == 0 {
		if down == len(*ls) {
			return engine.ErrShutdown
		}
		return nil
	}
	f := newHubFrame(opcode(kind), p, h.deflated.Load() > 0)
	f.refs.Store(int32(len(targets)))
	missed := 0
	var cause error
	for i, hl := range targets {
		targets[i] = nil
		if err := hl.enqueue(f); err != nil {
			missed++
			if cause == nil {
				cause = err
			}
			f.release()
		}
	}
	if missed > 0 {
		return fmt.Errorf("websocket: broadcast missed %d of %d loops: %w", missed, len(targets), cause)
	}
	return nil
}

// full reports whether a frame of size bytes would pass the loop's
// backlog limits.
func (hl *hubLoop) full(size int) bool {
	hl.mu.Lock()
	defer hl.mu.Unlock()
	n := len(hl.pending)
	return n >= HubMaxPending || n > 0 && hl.bytes+size > HubMaxPendingBytes
}

// enqueue queues f for the loop's members and, unless it is queued
// already, the task that delivers them. Called under hub.mu.
func (hl *hubLoop) enqueue(f *hubFrame) error {
	hl.mu.Lock()
	hl.pending = append(hl.pending, f)
	hl.bytes += len(f.plain)
	first := !hl.queued
	hl.queued = true
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
		hl.mu.Unlock()
		return err
	}
	return nil
}

// Run is the drain task: it delivers the queued broadcasts on the loop.
func (hl *hubLoop) Run() {
	hl.mu.Lock()
	batch := hl.pending
	hl.pending, hl.spare, hl.bytes, hl.queued = hl.spare[:0], nil, 0, false
	hl.mu.Unlock()

	dropped := 0
	hl.delivering = true
	for _, f := range batch {
		dropped += hl.deliver(f)
		f.release()
	}
	hl.delivering = false
	if hl.holes > 0 {
		hl.compact()
	}
	if dropped > 0 {
		hl.hub.dropped.Add(uint64(dropped))
	}
	clear(batch)
	hl.mu.Lock()
	if hl.spare == nil {
		hl.spare = batch[:0]
	}
	hl.mu.Unlock()
}

// deliver writes f to every member and returns how many PauseReading
// members missed it. A member's Write may drop it (CloseSlow) and so
// remove it: the slots are read afresh, and removals leave holes.
func (hl *hubLoop) deliver(f *hubFrame) (dropped int) {
	n := len(hl.members)
	for i := 0; i < n && i < len(hl.members); i++ {
		c := hl.members[i]
		if c == nil || c.closeSent || c.closeDone {
			continue
		}
		if c.cfg.slow == PauseReading && !c.t.ec.Writable() {
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
		_ = c.t.Write(f.frameFor(c)) // fails only once closing: nothing to deliver
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
	return c.t.AsyncWrite(f.frameFor(c))
}

// compact closes the holes Remove left during a delivery.
func (hl *hubLoop) compact() {
	j := 0
	for i, c := range hl.members {
		if c == nil {
			continue
		}
		if i != j {
			hl.members[j] = c
			c.setHubSlot(hl, j)
		}
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
