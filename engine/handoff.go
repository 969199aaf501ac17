package engine

import (
	"sync/atomic"

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
//     loop posts a completion on the target's ring whose tag is (the
//     listener's slot in the target's inbox, its generation, opHandoff) and
//     whose result is the fd. The
//     message rides in the accepting loop's next submission, with every
//     other op of the iteration, and wakes the target without an eventfd
//     write or a task-ring entry. The target's onCompletion routes opHandoff
//     to receiveHandoff, which serves the fd with the listener's handler and
//     configuration.
//   - Task: otherwise (epoll, an older kernel or profile, a target that
//     has not started, or a MsgRing error) the fd travels as a
//     task on the target's control ring (never its task ring, which the
//     user may bound: a full one would drop the connection).
//
// A message's tag names the listener by its slot in the target loop's
// inbox (handoffinbox.go), the one place the target reads on receipt. A
// listener takes a slot in each loop it sends to, on its first message
// there, and keeps it until it has closed and every message it sent has been
// received, so a late message never finds another listener.
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
const opHandoff driver.OpKind = 0x7f

// handoffState is a listener's hand-off bookkeeping; the counters are written
// by the accepting loop and read from anywhere.
type handoffState struct {
	// taskOnly sends every hand-off as a task (the package's tests set it
	// to reach the task path on rings that have MSG_RING).
	taskOnly         bool
	registered       bool                   // accepting loop only: the close callback is set
	routes           map[*Loop]handoffRoute // accepting loop only until closed: its slot in each target's inbox
	inflight         atomic.Int64           // messages sent, not yet received
	closed, released atomic.Bool
}

// handoffRoute is a listener's slot in one target loop's inbox.
type handoffRoute struct{ id, gen uint32 }

// handOff serves an accepted fd on target (on the accepting loop).
func (ln *Listener) handOff(target *Loop, fd int) {
	ln.loop.stats.accepted.Add(1)
	if target == ln.loop {
		newConn(target, fd, ln.h, ln.cfg).open()
		return
	}
	ln.loop.stats.handoffs.Add(1)
	if !ln.ho.taskOnly && ln.sendMsgRing(target, fd) {
		return
	}
	ln.sendTask(target, fd)
}

// sendTask hands fd to target as a task on its control ring, which a full
// task ring cannot refuse; a target that has shut down refuses, and the fd
// is closed and the refusal reported to the observers.
func (ln *Listener) sendTask(target *Loop, fd int) {
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
	in := target.handoffInbox()
	in.inflight.Add(1)
	if target.State() != Started {
		in.inflight.Add(-1)
		return false
	}
	if !ln.ho.registered {
		ln.ho.registered = true
		ln.closed.AddListener(tasks.Inline, func(tasks.Future[struct{}]) {
			ln.ho.closed.Store(true)
			if ln.ho.inflight.Load() == 0 {
				ln.releaseRoutes()
			}
		})
	}
	rt, ok := ln.ho.routes[target]
	if !ok {
		if ln.ho.routes == nil {
			ln.ho.routes = map[*Loop]handoffRoute{}
		}
		rt = in.addSender(ln)
		ln.ho.routes[target] = rt
	}
	ln.ho.inflight.Add(1)
	s := &sentHandoff{ln: ln, target: target, fd: fd}
	s.idx, s.gen = ln.loop.reg.add(s)
	if err := src.MsgRing(dst, makeTag(rt.id, rt.gen, opHandoff), int32(fd), makeTag(s.idx, s.gen, driver.OpMsgSent)); err != nil {
		ln.loop.reg.remove(s.idx, s.gen)
		ln.loop.stats.handoffFallbacks.Add(1)
		ln.handoffDone()
		in.inflight.Add(-1)
		return false
	}
	ln.loop.stats.msgRingHandoffs.Add(1)
	return true
}

// sentHandoff is a MSG_RING hand-off on its way: a registration of the
// accepting loop, carrying the fd, until its driver reports the message
// posted or refused.
type sentHandoff struct {
	ln       *Listener
	target   *Loop
	fd       int
	idx, gen uint32
}

func (s *sentHandoff) complete(_ driver.OpKind, c *driver.Completion) {
	ln := s.ln
	ln.loop.reg.remove(s.idx, s.gen)
	if c.Res >= 0 {
		return // posted: the target counts it down and serves the fd
	}
	// The kernel refused it after MsgRing returned: the target will never
	// see it, so the counts come down here and the fd goes as a task.
	s.target.inbox.inflight.Add(-1)
	ln.handoffDone()
	ln.loop.stats.msgRingHandoffs.Add(^uint64(0))
	ln.loop.stats.handoffFallbacks.Add(1)
	ln.sendTask(s.target, s.fd)
}

// shutdown waits: the driver reports the message whatever happens.
func (s *sentHandoff) shutdown() {}

// abandon: the driver is released without reporting it; whether the
// message was posted is unknown, so the fd is left to the target.
func (s *sentHandoff) abandon() { s.ln.loop.reg.remove(s.idx, s.gen) }

// handoffDone records one message received (or never sent).
func (ln *Listener) handoffDone() {
	if ln.ho.inflight.Add(-1) == 0 && ln.ho.closed.Load() {
		ln.releaseRoutes()
	}
}

// releaseRoutes gives back the listener's slot in every target's inbox,
// once: it has closed (no message is sent after that) and every message
// has been received.
func (ln *Listener) releaseRoutes() {
	if ln.ho.released.CompareAndSwap(false, true) {
		for target, rt := range ln.ho.routes {
			target.inbox.removeSender(rt)
		}
	}
}
