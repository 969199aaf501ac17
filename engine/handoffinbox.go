package engine

import (
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/ringloop/ringloop/internal/driver"
)

// handoffInbox is a loop's side of the MSG_RING hand-offs it receives
// (handoff.go): the listeners that send to it, by the slot their messages'
// tags carry, and the count of messages in flight towards it. It is a field
// of the Loop, so it lives and dies with it: nothing process-wide maps loops
// to their inboxes.
//
// Senders take and give back their slot from their own loops while this
// loop reads it on receipt, so the slot table is under a lock; it is taken
// once per connection handed over with MSG_RING, never on the I/O path.
type handoffInbox struct {
	inflight atomic.Int64 // messages sent, not yet received
	hook     sync.Once    // registers the shutdown hook that waits for them

	mu      sync.RWMutex
	senders slotTable[*Listener]
}

// handoffDrainTimeout bounds how long a shutting-down loop waits for
// hand-offs in flight towards it (one the kernel refused never arrives).
const handoffDrainTimeout = time.Second

// handoffInbox returns l's inbox, registering (once, before any message is
// counted) the shutdown hook that waits for the messages in flight.
func (l *Loop) handoffInbox() *handoffInbox {
	in := &l.inbox
	in.hook.Do(func() {
		l.AddShutdownHook(func() { l.drainHandoffs() })
	})
	return in
}

// addSender gives ln a slot, named in the tags of its messages to this
// loop.
func (in *handoffInbox) addSender(ln *Listener) handoffRoute {
	in.mu.Lock()
	defer in.mu.Unlock()
	id, gen := in.senders.add(ln)
	return handoffRoute{id, gen}
}

// removeSender frees a listener's slot; a message still carrying it would
// be stale.
func (in *handoffInbox) removeSender(rt handoffRoute) {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.senders.remove(rt.id, rt.gen)
}

// sender returns the listener in slot (idx, gen), nil if stale.
func (in *handoffInbox) sender(idx, gen uint32) *Listener {
	in.mu.RLock()
	defer in.mu.RUnlock()
	ln, _ := in.senders.get(idx, gen)
	return ln
}

// drainHandoffs reaps the ring until every hand-off in flight towards l has
// arrived, or handoffDrainTimeout passed (a shutdown hook, on the loop).
func (l *Loop) drainHandoffs() {
	end := now() + int64(handoffDrainTimeout)
	for l.inbox.inflight.Load() > 0 && now() < end {
		if _, err := l.drv.Wait(10*time.Millisecond, l.onCompletion); err != nil {
			return
		}
	}
}

// receiveHandoff serves an fd another loop sent with MSG_RING (on the target
// loop, from onCompletion). OnOpen's panic ends that connection only, as for
// any connection.
func (l *Loop) receiveHandoff(c *driver.Completion) {
	idx, gen, _ := splitTag(c.Tag)
	fd := int(c.Res)
	l.inbox.inflight.Add(-1)
	ln := l.inbox.sender(idx, gen)
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
