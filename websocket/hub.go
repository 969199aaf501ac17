package websocket

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/tasks"
)

// Hub is a set of connections, possibly on many loops of a group, that
// Broadcast sends one message to. Members are kept per loop: a broadcast
// encodes the frame once, and each loop holding members gets one task that
// writes it to all of them, so its cost off the loops does not grow with
// the number of connections and nothing is locked per connection. A loop
// delivers a long queue in slices of about 4096 member writes per task, so
// its other connections' I/O goes on during a burst.
//
// # Delivery and backpressure
//
// Every broadcast reaches every member that keeps reading, in one order
// (Broadcast calls are serialized), or Broadcast returns an error: a hub
// never skips a member for being momentarily behind. Instead it slows the
// senders down. The hub is congested while a member is over its high
// watermark (engine.BufferLimits) and still within its slow-consumer
// timeout, or while a loop has more broadcasts queued than the backlog
// (BacklogMessages, BacklogBytes). While it is congested:
//
//   - Broadcast called from a member's OnMessage (a chat relaying what a
//     member sent) is accepted, and that member's reads are paused
//     (engine.Conn.PauseRead, on its loop) until the congestion clears:
//     its next messages wait in its socket, and TCP slows its peer down.
//     Such a call is never refused for congestion, and each member adds at
//     most the broadcasts of one OnMessage past the backlog.
//   - Broadcast from any other goroutine, or from a loop outside a
//     member's OnMessage (a timer, another connection), is refused with
//     ErrHubBacklog, sending nothing: the caller learns of the loss.
//     BroadcastContext waits instead (off the loops), until the hub can
//     take the message or ctx ends.
//
// # Slow consumers
//
// A member that stops reading must not stall the room for long: one that
// stays over its high watermark (it has not drained under its low
// watermark) for the slow-consumer timeout (SlowTimeout, default 5 s) is
// handled by its WithSlowConsumer policy, and the
// senders go on. CloseSlow drops it (OnClose reports ClosePolicyViolation
// and ErrSlowConsumer). PauseReading skips it: it misses broadcasts, counted
// in Stats' Dropped, until its output drains under the low watermark, and from
// then on it gets the next ones; having been slow once, it gets no more
// grace and is skipped at once whenever it is over its high watermark
// again, so a peer that reads a trickle cannot hold the room back time
// after time. Stats counts the members the policy acted on. A member's
// memory is bounded by its high watermark, plus what the loops had queued
// when it passed it (the backlogs), plus one OnMessage's broadcasts per
// sender.
//
// A member sending a fragmented message (NextWriter) gets a broadcast after
// that message, with its AsyncWriteMessage frames: they are held within its
// async write limit, and past it the member misses the broadcast, counted
// in Stats' Dropped too.
//
// Compression: when a member negotiated permessage-deflate, a message of 64
// bytes or more is deflated once per broadcast and the compressed frame is
// shared by every such member (no context takeover makes each message a
// stream of its own); the others get the uncompressed frame.
//
// The zero Hub is ready to use, with the default limits. The limit fields
// are read at its first Add (later changes have no effect), so set them
// before, as the Hub is made. A Hub must not be copied.
//
//	room := &websocket.Hub{SlowTimeout: time.Second}
type Hub struct {
	// BacklogMessages and BacklogBytes are how many broadcasts, and how
	// many frame bytes, a loop may have queued, not yet written to its
	// members, before the hub counts as congested (defaults 1024 and 1 MiB;
	// zero or negative takes the default). A larger backlog absorbs longer
	// bursts before the senders pause, and costs up to that much per loop,
	// and per slow member, in memory.
	BacklogMessages, BacklogBytes int
	// SlowTimeout is how long a member may stay over its high watermark,
	// with the senders held back for it, before its slow-consumer policy
	// acts (default 5 s; zero or negative takes the default). It is how
	// long one member that stops reading can stall the room; a member that
	// reads drains in far less.
	SlowTimeout time.Duration

	cfg hubConfig // the limits, fixed at the first Add (resolveLimits)

	// mu orders broadcasts, so every member sees them in one order, and
	// serializes adding a loop to loops.
	mu      sync.Mutex
	loops   atomic.Pointer[[]*hubLoop] // one per loop that held a member; copied on change
	targets []*hubLoop                 // Broadcast's scratch, under mu

	n        atomic.Int64  // members
	deflated atomic.Int64  // members that negotiated permessage-deflate
	dropped  atomic.Uint64 // broadcasts members missed
	slow     atomic.Uint64 // times a member's slow-consumer policy acted
	pauses   atomic.Uint64 // times a sender's reads were paused
	refused  atomic.Uint64 // broadcasts refused with ErrHubBacklog

	// Congestion (hub_backpressure.go). stall is held+full: the hub is
	// congested while it is positive. cmu orders its changes with the
	// senders that pause on it, so none is left paused.
	stall   atomic.Int64
	held    atomic.Int64 // members over their high watermark, within their grace
	full    atomic.Int64 // loops whose backlog is full
	cmu     sync.Mutex
	clearCh chan struct{} // closed when the congestion clears; BroadcastContext waits on it
}

// Defaults of a Hub's limits.
const (
	defaultHubBacklog      = 1024
	defaultHubBacklogBytes = 1 << 20
	defaultHubSlowTimeout  = 5 * time.Second
)

// ErrHubBacklog is Broadcast's answer, sending nothing, when the hub is
// congested and the caller is not a member's OnMessage whose reads it
// could pause: a member is over its high watermark within its slow-consumer
// timeout, or a loop has a full backlog. The producer outruns the members;
// BroadcastContext waits instead. It wraps tasks.ErrRejected.
var ErrHubBacklog = fmt.Errorf("websocket: hub congested (a member over its high watermark, or a loop's broadcast backlog full): %w", tasks.ErrRejected)

// hubConfig is a hub's limits, taken from its fields at its first Add.
type hubConfig struct {
	backlog      int
	backlogBytes int
	slowTimeout  time.Duration
}

// resolveLimits fixes the limits from the fields (under mu, before the
// first loop is published: whoever sees a loop sees them).
func (h *Hub) resolveLimits() {
	h.cfg = hubConfig{backlog: defaultHubBacklog, backlogBytes: defaultHubBacklogBytes, slowTimeout: defaultHubSlowTimeout}
	if h.BacklogMessages > 0 {
		h.cfg.backlog = h.BacklogMessages
	}
	if h.BacklogBytes > 0 {
		h.cfg.backlogBytes = h.BacklogBytes
	}
	if h.SlowTimeout > 0 {
		h.cfg.slowTimeout = h.SlowTimeout
	}
}

// HubStats is a snapshot of a hub's counters.
type HubStats struct {
	Members int // members now
	// Dropped is how many broadcasts members missed: PauseReading members
	// their policy skipped (slow consumers), and members whose frames held
	// behind a fragmented message filled their async write limit. A member
	// that keeps reading misses none.
	Dropped uint64
	// Slow is how many times a member's slow-consumer policy acted: it was
	// closed (CloseSlow) or started skipping broadcasts (PauseReading).
	Slow uint64
	// Pauses is how many times a sender's reads were paused because the
	// hub was congested.
	Pauses uint64
	// Refused is how many broadcasts were refused with ErrHubBacklog.
	Refused uint64
	// Held is how many members are over their high watermark within their
	// slow-consumer timeout now; FullLoops how many loops have a full
	// backlog now. Either makes the hub congested.
	Held, FullLoops int
}

// Stats returns the hub's counters; safe from any goroutine.
func (h *Hub) Stats() HubStats {
	return HubStats{Members: h.Len(), Dropped: h.dropped.Load(), Slow: h.slow.Load(), Pauses: h.pauses.Load(),
		Refused: h.refused.Load(), Held: int(h.held.Load()), FullLoops: int(h.full.Load())}
}

// Len returns the number of members; safe from any goroutine.
func (h *Hub) Len() int { return int(h.n.Load()) }

// hubMember is one membership of a connection: its slot in a hub's loop and
// its state there (loop only).
type hubMember struct {
	c   *Conn
	hl  *hubLoop
	idx int // in hl.members

	over   bool      // over its high watermark, within its grace: the hub is held for it
	since  time.Time // when it went over
	slow   bool      // its policy skips it until it drains (PauseReading)
	struck bool      // it was slow once: no more grace
	paused bool      // the hub paused its reads; it is in hl.paused
}

// Add makes c a member. Call it on c's loop, typically in OnOpen; off the
// loop it hands itself to the loop. A connection that is closing is not
// added, and a member leaves by itself when it closes (before its OnClose).
// Adding a member twice has no effect.
func (h *Hub) Add(c *Conn) {
	l := c.ec.Loop()
	if !l.InEventLoop() {
		_ = l.Execute(tasks.Func(func() { h.Add(c) })) // fails only when the loop is gone, and c with it
		return
	}
	if c.ended || c.closeSent || c.closeDone {
		return
	}
	for _, m := range c.hubs {
		if m.hl.hub == h {
			return
		}
	}
	hl := h.loopFor(l)
	m := &hubMember{c: c, hl: hl, idx: len(hl.members)}
	c.hubs = append(c.hubs, m)
	hl.members = append(hl.members, m)
	hl.count.Add(1)
	h.n.Add(1)
	if c.deflate {
		h.deflated.Add(1)
	}
	if !c.ec.Writable() {
		hl.writability(m, false) // already over its high watermark
	}
}

// Remove takes c out of the hub; it is not an error if c is not a member.
// Call it on c's loop (OnClose, OnMessage...); off the loop it hands
// itself to the loop. A member whose reads the hub paused has them resumed.
func (h *Hub) Remove(c *Conn) {
	l := c.ec.Loop()
	if !l.InEventLoop() {
		_ = l.Execute(tasks.Func(func() { h.Remove(c) }))
		return
	}
	for i, m := range c.hubs {
		if m.hl.hub == h {
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
	} else {
		h.resolveLimits()
	}
	hl := newHubLoop(h, l)
	ls := append(append(make([]*hubLoop, 0, len(old)+1), old...), hl)
	h.loops.Store(&ls)
	return hl
}

// leave ends c's i-th membership (on the loop): its congestion state is
// given back, and reads the hub paused are resumed unless c is closing.
func (c *Conn) leave(i int) {
	m := c.hubs[i]
	last := len(c.hubs) - 1
	c.hubs[i] = c.hubs[last]
	c.hubs[last] = nil
	c.hubs = c.hubs[:last]
	hl := m.hl
	hl.count.Add(-1)
	hl.hub.n.Add(-1)
	if c.deflate {
		hl.hub.deflated.Add(-1)
	}
	hl.release(m)
	if hl.iterating {
		hl.members[m.idx] = nil
		hl.holes++
		return
	}
	end := len(hl.members) - 1
	if m.idx != end {
		o := hl.members[end]
		hl.members[m.idx] = o
		o.idx = m.idx
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

// Broadcast sends p as one message of kind to every member, from any
// goroutine or loop; p may be reused once it returns. The frame is built
// once and queued on each loop holding members, in the same order for
// every loop (Broadcast calls are serialized), so all members see the
// broadcasts in one order. A member that is closing is skipped.
//
// Called from a member's OnMessage it is not refused for congestion: the
// member's reads are paused instead (see Hub). Anywhere else, while the hub
// is congested, it returns ErrHubBacklog (an tasks.ErrRejected), sending
// nothing. It returns engine.ErrShutdown when every loop that held members
// has shut down. When some loops refused the task (shut down, or a bounded
// task ring full) and others took it, the error says how many missed it
// and wraps the first cause.
func (h *Hub) Broadcast(kind MessageKind, p []byte) error {
	_, err := h.broadcast(kind, p)
	return err
}

// BroadcastContext is Broadcast that, off the hub's loops, waits while the
// hub is congested rather than refuse: until the message is queued, or ctx
// ends (its error, wrapped with ErrHubBacklog, is returned and nothing is
// sent). On one of the hub's loops it cannot wait (the loop must run to
// drain): it is Broadcast.
func (h *Hub) BroadcastContext(ctx context.Context, kind MessageKind, p []byte) error {
	for {
		onLoop, err := h.broadcast(kind, p)
		if onLoop || !errors.Is(err, ErrHubBacklog) {
			return err
		}
		ch := h.clearWait()
		if ch == nil {
			continue // cleared meanwhile
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("%w: %w", ErrHubBacklog, context.Cause(ctx))
		}
	}
}

// broadcast is Broadcast; onLoop reports whether it ran on one of the
// hub's loops.
func (h *Hub) broadcast(kind MessageKind, p []byte) (onLoop bool, err error) {
	if kind != Text && kind != Binary {
		return false, errBadKind
	}
	ls := h.loops.Load()
	if ls == nil {
		return false, nil
	}
	// The member whose OnMessage called, if any: the one to pause.
	var sender *hubMember
	for _, hl := range *ls {
		if hl.loop.InEventLoop() {
			onLoop, sender = true, hl.sender
			break
		}
	}
	if sender == nil && h.stall.Load() > 0 {
		h.refused.Add(1)
		return onLoop, ErrHubBacklog
	}
	err = h.queue(ls, kind, p)
	if sender != nil && err == nil && h.stall.Load() > 0 {
		h.pauseSender(sender)
	}
	return onLoop, err
}

// queue builds the frame and queues it on every loop with members.
func (h *Hub) queue(ls *[]*hubLoop, kind MessageKind, p []byte) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	targets := h.targets[:0]
	down := 0
	for _, hl := range *ls {
		switch {
		case hl.loop.State() >= engine.Shutdown:
			down++
			hl.abandon() // what it had queued will never drain
		case hl.count.Load() > 0:
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
