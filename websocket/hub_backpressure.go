package websocket

import (
	"sync/atomic"
	"time"

	"github.com/ringloop/ringloop/tasks"
)

// A hub's backpressure. The hub is congested while hub.stall, the members
// over their high watermark within their grace (hub.held) plus the loops
// whose backlog is full (hub.full), is positive. A sender paused on it is
// recorded on its loop (hubLoop.paused) and its loop marked (wantWake) under
// hub.cmu, after checking stall under the same lock; every change of stall
// is made under it too, and the one that brings it to 0 is followed by
// wake, which queues a resume task on every marked loop. So a sender that
// pauses either sees the congestion already cleared, or is woken by the
// change that clears it: none is left paused. Everything about a member,
// its pause included, happens on its loop; other loops only queue tasks.

// addStall adds d to one of the congestion counts (c: &hub.held or
// &hub.full) and to stall; it reports whether the hub is then clear, in
// which case the caller, once it holds no lock of the hub's, calls wake.
func (h *Hub) addStall(c *atomic.Int64, d int64) bool {
	h.cmu.Lock()
	c.Add(d)
	n := h.stall.Add(d)
	h.cmu.Unlock()
	return n == 0
}

// wake resumes the senders paused on the congestion, if it is still clear:
// each loop holding some gets a resume task (queued with no lock held: a
// task ring's reject policy may wait). BroadcastContext's waiters return.
func (h *Hub) wake() {
	var buf [8]*hubLoop
	wake := buf[:0]
	h.cmu.Lock()
	if h.stall.Load() != 0 {
		h.cmu.Unlock()
		return // congested again: the change that clears it wakes
	}
	if h.clearCh != nil {
		close(h.clearCh)
		h.clearCh = nil
	}
	if ls := h.loops.Load(); ls != nil {
		for _, hl := range *ls {
			if hl.wantWake && !hl.resumeQueued {
				hl.resumeQueued = true
				wake = append(wake, hl)
			}
		}
	}
	h.cmu.Unlock()
	for _, hl := range wake {
		if hl.loop.Execute((*hubResume)(hl)) != nil {
			// The loop is shutting down: its members close, and leave.
			h.cmu.Lock()
			hl.resumeQueued = false
			h.cmu.Unlock()
		}
	}
}

// clearWait returns a channel closed when the congestion clears, or nil if
// it is clear now.
func (h *Hub) clearWait() <-chan struct{} {
	h.cmu.Lock()
	defer h.cmu.Unlock()
	if h.stall.Load() == 0 {
		return nil
	}
	if h.clearCh == nil {
		h.clearCh = make(chan struct{})
	}
	return h.clearCh
}

// pauseSender pauses the reads of m, whose OnMessage broadcast while the hub
// was congested (on m's loop), until the congestion clears.
func (h *Hub) pauseSender(m *hubMember) {
	hl := m.hl
	h.cmu.Lock()
	if h.stall.Load() == 0 {
		h.cmu.Unlock()
		return
	}
	hl.wantWake = true
	h.cmu.Unlock()
	if m.paused {
		return
	}
	m.paused = true
	hl.paused = append(hl.paused, m)
	h.pauses.Add(1)
	m.c.hubPause()
}

// hubResume is a hubLoop's resume task: wake queued it on the loop.
type hubResume hubLoop

// Run resumes the loop's paused senders unless the hub is congested again
// (then the change that clears it wakes them).
func (r *hubResume) Run() {
	hl := (*hubLoop)(r)
	h := hl.hub
	h.cmu.Lock()
	hl.resumeQueued = false
	if h.stall.Load() != 0 {
		h.cmu.Unlock()
		return
	}
	hl.wantWake = false
	h.cmu.Unlock()
	for i, m := range hl.paused {
		hl.paused[i] = nil
		m.paused = false
		m.c.hubResume()
	}
	hl.paused = hl.paused[:0]
}

// hubPause and hubResume pause and resume c's reads for the hubs (loop
// only), composed with the pause of its own slow-consumer policy
// (c.paused): reads resume when neither holds them.
func (c *Conn) hubPause() {
	c.hubPauses++
	if c.hubPauses == 1 && !c.paused {
		c.ec.PauseRead()
	}
}

func (c *Conn) hubResume() {
	c.hubPauses--
	if c.hubPauses == 0 && !c.paused {
		c.ec.ResumeRead()
	}
}

// onMessage hands a message to the handler with c recorded as the sender
// in each hub it is a member of, so that a Broadcast from OnMessage knows
// whose reads to pause.
func (c *Conn) onMessage(kind MessageKind, p []byte) {
	if len(c.hubs) == 0 {
		c.h.OnMessage(c, kind, p)
		return
	}
	for _, m := range c.hubs {
		m.hl.sender = m
	}
	c.h.OnMessage(c, kind, p)
	for _, m := range c.hubs {
		if m.hl.sender == m {
			m.hl.sender = nil
		}
	}
}

// hubWritability passes the engine's watermark signal to c's hubs (loop
// only).
func (c *Conn) hubWritability(writable bool) {
	for _, m := range c.hubs {
		m.hl.writability(m, writable)
	}
}

// writability tracks a member's watermark: over its high watermark it holds
// the hub (within its grace) or, once struck, is skipped at once; back under
// its low watermark it is counted no more, or rejoins.
func (hl *hubLoop) writability(m *hubMember, writable bool) {
	h := hl.hub
	if !writable {
		switch {
		case m.over || m.slow:
		case m.struck:
			m.slow = true
			h.slow.Add(1)
		default:
			m.over, m.since = true, time.Now()
			hl.overN++
			h.addStall(&h.held, 1)
			hl.armCheck(h.cfg.slowTimeout)
		}
		return
	}
	m.slow = false
	if m.over {
		m.over = false
		hl.overN--
		if h.addStall(&h.held, -1) {
			h.wake()
		}
	}
}

// armCheck schedules the slow-consumer check in d unless it is scheduled:
// a check already due sooner re-arms for the members it leaves.
func (hl *hubLoop) armCheck(d time.Duration) {
	if hl.checking {
		return
	}
	if _, err := hl.loop.Schedule(tasks.Func(hl.check), d); err == nil {
		hl.checking = true
	}
}

// checkSlow applies the slow-consumer policy to the members that have been
// over their high watermark for the timeout, and re-arms for the others.
func (hl *hubLoop) checkSlow() {
	hl.checking = false
	h := hl.hub
	timeout := h.cfg.slowTimeout
	now := time.Now()
	next := timeout
	cleared := false
	was := hl.iterating
	hl.iterating = true // a member that leaves meanwhile leaves a hole
	for _, m := range hl.members {
		if m == nil || !m.over {
			continue
		}
		if left := timeout - now.Sub(m.since); left > 0 {
			next = min(next, left)
			continue
		}
		m.over = false
		hl.overN--
		if h.addStall(&h.held, -1) {
			cleared = true
		}
		h.slow.Add(1)
		if m.c.cfg.slow == CloseSlow {
			m.c.dropSlow() // it leaves when its OnClose comes
		} else {
			m.slow, m.struck = true, true
		}
	}
	hl.iterating = was
	if !was && hl.holes > 0 {
		hl.compact()
	}
	if hl.overN > 0 {
		hl.armCheck(next)
	}
	if cleared {
		h.wake()
	}
}

// release gives back what membership m holds of the hub's congestion and
// pauses, as it leaves (on the loop).
func (hl *hubLoop) release(m *hubMember) {
	if hl.sender == m {
		hl.sender = nil
	}
	if m.paused {
		m.paused = false
		for i, p := range hl.paused {
			if p == m {
				last := len(hl.paused) - 1
				hl.paused[i] = hl.paused[last]
				hl.paused[last] = nil
				hl.paused = hl.paused[:last]
				break
			}
		}
		m.c.hubResume()
	}
	if m.over {
		m.over = false
		hl.overN--
		if hl.hub.addStall(&hl.hub.held, -1) {
			hl.hub.wake()
		}
	}
}
