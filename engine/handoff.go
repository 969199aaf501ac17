package engine

import (
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/ringloop/ringloop/internal/driver"
	"github.com/ringloop/ringloop/tasks"
)

// Boss → worker hand-off of accepted connections.
//
// A listener whose chooser picks another loop hands the accepted fd over in
// one of two ways:
//
//   - MSG_RING: when both loops run io_uring with IORING_OP_MSG_RING (5.18)
//     and the target loop has started (its ring is enabled), the accepting
//     loop posts a completion on the target's ring whose tag is
//     (listener id, generation, opHandoff) and whose result is the fd. The
//     message rides in the accepting loop's next submission, with every
//     other op of the iteration, and wakes the target without an eventfd
//     write or a task-ring entry. The target's onCompletion routes opHandoff
//     to receiveHandoff, which serves the fd with the listener's handler and
//     configuration.
//   - Task: otherwise (epoll, an older kernel or profile, a target that
//     has not started, a MsgRing error, or HandoffTask) the fd travels as a
//     task on the target's control ring (never its task ring, which the
//     user may bound: a full one would drop the connection).
//
// Listener ids come from a small process-wide table read only on receipt. An
// id stays reserved until its listener has closed and every message sent
// with it has been received, so a late message never finds another
// listener.
//
// A message must not reach a ring that has been closed or replaced: the
// sender's driver reads the target's ring fd when the message is prepared
// and submits it later, so a closed ring refuses it, and a ring fd number
// reused meanwhile would deliver it to the wrong loop. So each target loop
// counts the messages in flight towards it, and before it releases its
// driver (a shutdown hook, registered before the first message) it keeps
// reaping its ring until they have all arrived (closing their fds if it is
// shutting down). The sender raises the count before it checks that the
// target is running, so either the target sees the message or the sender
// sees it stopping and uses the control ring.
//
// Each message also stays a registration of the sending loop (sentHandoff,
// carrying the fd) until the sender's driver reports it posted or refused:
// one the kernel refuses after MsgRing returned goes as a task
// instead, and every count it raised comes down.

// opHandoff is the op kind of a hand-off message. It is the highest kind, so
// kinds added to registry.go's list do not collide with it.
const opHandoff opKind = 0x7f

// HandoffMode chooses how a listener hands accepted connections to other
// loops.
type HandoffMode uint32

// The hand-off modes.
const (
	// HandoffAuto uses MSG_RING where both rings support it and the target
	// loop runs, else a task on its control ring (the default).
	HandoffAuto HandoffMode = iota
	// HandoffTask always sends a task on the target loop's control ring.
	HandoffTask
)

// String returns "auto" or "task".
func (m HandoffMode) String() string {
	if m == HandoffTask {
		return "task"
	}
	return "auto"
}

// HandoffStats counts how a listener's accepted connections reached the
// loops that serve them.
type HandoffStats struct {
	Local    uint64 // served by the accepting loop itself
	Task     uint64 // handed over as a task on the target loop's control ring
	MsgRing  uint64 // handed over with IORING_OP_MSG_RING (posted, or on its way)
	Fallback uint64 // MsgRing refused, at once or by the kernel; sent as a task (counted in Task too)
}

// handoffState is a listener's hand-off bookkeeping; the counters are written
// by the accepting loop and read from anywhere.
type handoffState struct {
	mode                 atomic.Uint32
	registered           bool   // accepting loop only
	id, gen              uint32 // registry slot, set on the first MSG_RING
	local, task, msgRing atomic.Uint64
	fallback             atomic.Uint64
	inflight             atomic.Int64 // messages sent, not yet received
	closed, released     atomic.Bool
}

// SetHandoff chooses how connections accepted from now on are handed to
// other loops. Safe from any goroutine; to cover every connection, call it on
// the listener's loop in the task that called Listen (accepts are processed
// only after that task returns).
func (ln *Listener) SetHandoff(m HandoffMode) { ln.ho.mode.Store(uint32(m)) }

// HandoffStats returns how the accepted connections were handed over so far.
func (ln *Listener) HandoffStats() HandoffStats {
	return HandoffStats{
		Local:    ln.ho.local.Load(),
		Task:     ln.ho.task.Load(),
		MsgRing:  ln.ho.msgRing.Load(),
		Fallback: ln.ho.fallback.Load(),
	}
}

// handOff serves an accepted fd on target (on the accepting loop).
func (ln *Listener) handOff(target *Loop, fd int) {
	if target == ln.loop {
		ln.ho.local.Add(1)
		newConn(target, fd, ln.h, ln.cfg).open()
		return
	}
	ln.loop.stats.handoffs.Add(1)
	if HandoffMode(ln.ho.mode.Load()) == HandoffAuto && ln.sendMsgRing(target, fd) {
		return
	}
	ln.sendTask(target, fd)
}

// sendTask hands fd to target as a task on its control ring, which a full
// task ring cannot refuse; a target that has shut down refuses, and the fd
// is closed and the refusal reported to the observers.
func (ln *Listener) sendTask(target *Loop, fd int) {
	ln.ho.task.Add(1)
	if err := target.control(&handoff{loop: target, fd: fd, h: ln.h, cfg: ln.cfg}); err != nil {
		ln.cfg.refused(target, fd)
	}
}

// sendMsgRing posts fd on target's ring; false means send a task.
func (ln *Listener) sendMsgRing(target *Loop, fd int) bool {
	if !ln.loop.info.Features.MsgRing || !target.info.Features.MsgRing || target.State() != Started {
		return false
	}
	src, ok := ln.loop.drv.(driver.Messenger)
	if !ok {
		return false
	}
	dst := target.drv
	ht := handoffTargetOf(target)
	ht.inflight.Add(1)
	if target.State() != Started {
		ht.inflight.Add(-1)
		return false
	}
	if !ln.ho.registered {
		ln.ho.registered = true
		ln.ho.id, ln.ho.gen = handoffs.add(ln)
		ln.closed.AddListener(tasks.Inline, func(tasks.Future[struct{}]) {
			ln.ho.closed.Store(true)
			if ln.ho.inflight.Load() == 0 {
				ln.releaseHandoffID()
			}
		})
	}
	ln.ho.inflight.Add(1)
	s := &sentHandoff{ln: ln, target: target, ht: ht, fd: fd}
	s.idx, s.gen = ln.loop.reg.add(s)
	if err := src.MsgRing(dst, makeTag(ln.ho.id, ln.ho.gen, opHandoff), int32(fd), makeTag(s.idx, s.gen, opMsgSent)); err != nil {
		ln.loop.reg.remove(s.idx, s.gen)
		ln.ho.fallback.Add(1)
		ln.handoffDone()
		ht.inflight.Add(-1)
		return false
	}
	ln.ho.msgRing.Add(1)
	return true
}

// sentHandoff is a MSG_RING hand-off on its way: a registration of the
// accepting loop, carrying the fd, until its driver reports the message
// posted or refused.
type sentHandoff struct {
	ln       *Listener
	target   *Loop
	ht       *handoffTarget
	fd       int
	idx, gen uint32
}

func (s *sentHandoff) complete(_ opKind, c *driver.Completion) {
	ln := s.ln
	ln.loop.reg.remove(s.idx, s.gen)
	if c.Res >= 0 {
		return // posted: the target counts it down and serves the fd
	}
	// The kernel refused it after MsgRing returned: the target will never
	// see it, so the counts come down here and the fd goes as a task.
	s.ht.inflight.Add(-1)
	ln.handoffDone()
	ln.ho.msgRing.Add(^uint64(0))
	ln.ho.fallback.Add(1)
	ln.sendTask(s.target, s.fd)
}

// shutdown waits: the driver reports the message whatever happens.
func (s *sentHandoff) shutdown() {}

// abandon: the driver is released without reporting it; whether the
// message was posted is unknown, so the fd is left to the target.
func (s *sentHandoff) abandon() { s.ln.loop.reg.remove(s.idx, s.gen) }

// handoffTarget counts the MSG_RING hand-offs in flight towards one loop.
type handoffTarget struct {
	inflight atomic.Int64
	once     sync.Once
}

// handoffTargets maps a target *Loop to its *handoffTarget; an entry lives
// until its loop terminates.
var handoffTargets sync.Map

// handoffDrainTimeout bounds how long a shutting-down loop waits for
// hand-offs in flight towards it (one the kernel refused never arrives).
const handoffDrainTimeout = time.Second

// handoffTargetOf returns l's counter, registering (once, before any message
// is counted) the shutdown hook that waits for the messages in flight.
func handoffTargetOf(l *Loop) *handoffTarget {
	v, ok := handoffTargets.Load(l)
	if !ok {
		v, _ = handoffTargets.LoadOrStore(l, &handoffTarget{})
	}
	ht := v.(*handoffTarget)
	ht.once.Do(func() {
		l.AddShutdownHook(func() { l.drainHandoffs(ht) })
	})
	if l.State() == Terminated { // terminate's Delete may have come first
		handoffTargets.Delete(l)
	}
	return ht
}

// drainHandoffs reaps the ring until every hand-off in flight towards l has
// arrived, or handoffDrainTimeout passed (a shutdown hook, on the loop).
func (l *Loop) drainHandoffs(ht *handoffTarget) {
	end := now() + int64(handoffDrainTimeout)
	for ht.inflight.Load() > 0 && now() < end {
		if _, err := l.drv.Wait(10*time.Millisecond, l.onCompletion); err != nil {
			return
		}
	}
}

// handoffDone records one message received (or never sent).
func (ln *Listener) handoffDone() {
	if ln.ho.inflight.Add(-1) == 0 && ln.ho.closed.Load() {
		ln.releaseHandoffID()
	}
}

func (ln *Listener) releaseHandoffID() {
	if ln.ho.released.CompareAndSwap(false, true) {
		handoffs.remove(ln.ho.id, ln.ho.gen)
	}
}

// receiveHandoff serves an fd another loop sent with MSG_RING (on the target
// loop, from onCompletion). OnOpen's panic ends that connection only, as for
// any connection.
func (l *Loop) receiveHandoff(c *driver.Completion) {
	idx, gen, _ := splitTag(c.Tag)
	fd := int(c.Res)
	if v, ok := handoffTargets.Load(l); ok {
		v.(*handoffTarget).inflight.Add(-1)
	}
	ln := handoffs.lookup(idx, gen)
	if ln == nil {
		l.stats.stale.Add(1)
		if fd >= 0 {
			unix.Close(fd)
		}
		return
	}
	defer ln.handoffDone()
	if fd < 0 {
		return
	}
	if l.State() >= ShuttingDown {
		ln.cfg.refused(l, fd)
		return
	}
	newConn(l, fd, ln.h, ln.cfg).open()
}

// handoffRegistry maps listener ids to listeners for MSG_RING receivers.
type handoffRegistry struct {
	mu    sync.RWMutex
	slots []regSlotListener
	free  []uint32
}

type regSlotListener struct {
	gen uint32
	ln  *Listener
}

var handoffs handoffRegistry

func (r *handoffRegistry) add(ln *Listener) (idx, gen uint32) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if n := len(r.free); n > 0 {
		idx = r.free[n-1]
		r.free = r.free[:n-1]
	} else {
		idx = uint32(len(r.slots))
		r.slots = append(r.slots, regSlotListener{})
	}
	r.slots[idx].ln = ln
	return idx, r.slots[idx].gen
}

func (r *handoffRegistry) remove(idx, gen uint32) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := &r.slots[idx]
	if s.gen != gen || s.ln == nil {
		return
	}
	s.ln = nil
	s.gen = (s.gen + 1) & tagGenMask
	r.free = append(r.free, idx)
}

func (r *handoffRegistry) lookup(idx, gen uint32) *Listener {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if int(idx) >= len(r.slots) || r.slots[idx].gen != gen {
		return nil
	}
	return r.slots[idx].ln
}
