package engine

import (
	"sync/atomic"
	"time"

	"github.com/ringloop/ringloop/internal/loopapi"
)

// stats are written by the loop (and wakes by producers) and read from any
// goroutine.
type stats struct {
	iterations, waits, wakes, completions, stale atomic.Uint64
	tasks, panics, emptyWakes                    atomic.Uint64
	waitErrors, acceptErrors                     atomic.Uint64
	ioNanos, taskNanos, longest                  atomic.Uint64
	timers, registrations                        atomic.Int64 // gauges, published each iteration
	accepted, handoffs                           atomic.Uint64
	msgRingHandoffs, handoffFallbacks            atomic.Uint64
	spins                                        atomic.Uint64
	conns                                        atomic.Int64  // gauge, published each iteration
	packetsIn, packetsOut, packetsDropped        atomic.Uint64 // published each iteration from packets
}

// packetCounts are the datagram counts of a loop's sockets (package packet),
// kept by the loop without atomics (a datagram costs a plain increment) and
// published with the gauges.
type packetCounts = loopapi.PacketCounts

// publishGauges copies loop-only sizes where other goroutines can read them.
// It runs every iteration, so it stores only what changed: an atomic store is
// a full barrier on amd64 (XCHG), a load of the loop's own value is a plain
// read, and most iterations change none of the gauges.
func (l *Loop) publishGauges() {
	publish(&l.stats.timers, int64(l.heap.Len()))
	publish(&l.stats.registrations, int64(l.reg.live))
	publish(&l.stats.conns, int64(l.reg.conns))
	if l.packets != (packetCounts{}) {
		publishCount(&l.stats.packetsIn, l.packets.In)
		publishCount(&l.stats.packetsOut, l.packets.Out)
		publishCount(&l.stats.packetsDropped, l.packets.Dropped)
	}
}

// publish and publishCount store v in a, which only the loop writes, unless
// a holds it already.
func publish(a *atomic.Int64, v int64) {
	if a.Load() != v {
		a.Store(v)
	}
}

func publishCount(a *atomic.Uint64, v uint64) {
	if a.Load() != v {
		a.Store(v)
	}
}

// Metrics is a snapshot of a loop's counters since it was built.
type Metrics struct {
	Iterations   uint64        // loop iterations
	Waits        uint64        // driver waits (blocking or not)
	Wakes        uint64        // driver wakes issued by producers
	Completions  uint64        // completions dispatched
	Stale        uint64        // completions dropped as stale
	TasksRun     uint64        // tasks, timers and tail tasks run
	Panics       uint64        // tasks and handlers that panicked or called runtime.Goexit
	EmptyWakeups uint64        // premature empty returns from blocking waits
	WaitErrors   uint64        // driver waits that failed (each is retried after a back-off)
	AcceptErrors uint64        // accepts that failed on this loop's listeners (EMFILE...)
	IOTime       time.Duration // time spent handling completions
	TaskTime     time.Duration // time spent running tasks
	Longest      time.Duration // longest completion batch
	Pending      int           // approximate tasks waiting
	Timers       int           // pending timers, as of the last iteration
	Registered   int           // live connections, listeners and watches, as of the last iteration
	Connections  int           // live connections, as of the last iteration
	Accepted     uint64        // connections this loop's listeners accepted
	Handoffs     uint64        // of those, handed to other loops (the rest this loop serves)
	// MsgRingHandoffs are the hand-offs posted on the target's ring with
	// IORING_OP_MSG_RING; the others went as tasks on the target's control
	// ring. HandoffFallbacks counts the MSG_RING hand-offs refused, at once
	// or by the kernel, and sent as tasks instead.
	MsgRingHandoffs  uint64
	HandoffFallbacks uint64
	Spins            uint64 // driver polls the loop made spinning instead of sleeping (WithSpin)
	// The datagrams of the loop's packet.Conn sockets, as of the last iteration:
	// delivered to OnPacket, taken by the kernel, and lost on the loop's
	// side (received over MaxSize, refused by the kernel, or still queued
	// when the socket closed; each but the last also reported to
	// OnPacketError). What the kernel drops before the loop reads it is
	// in /proc/net/snmp (RcvbufErrors).
	PacketsReceived uint64
	PacketsSent     uint64
	PacketsDropped  uint64
}

// Metrics returns the loop's counters; cheap, from any goroutine.
func (l *Loop) Metrics() Metrics {
	s := &l.stats
	return Metrics{
		Iterations:       s.iterations.Load(),
		Waits:            s.waits.Load(),
		Wakes:            s.wakes.Load(),
		Completions:      s.completions.Load(),
		Stale:            s.stale.Load(),
		TasksRun:         s.tasks.Load(),
		Panics:           s.panics.Load(),
		EmptyWakeups:     s.emptyWakes.Load(),
		WaitErrors:       s.waitErrors.Load(),
		AcceptErrors:     s.acceptErrors.Load(),
		IOTime:           time.Duration(s.ioNanos.Load()),
		TaskTime:         time.Duration(s.taskNanos.Load()),
		Longest:          time.Duration(s.longest.Load()),
		Pending:          l.pendingTasks(),
		Timers:           int(s.timers.Load()),
		Registered:       int(s.registrations.Load()),
		Connections:      int(s.conns.Load()),
		Accepted:         s.accepted.Load(),
		Handoffs:         s.handoffs.Load(),
		MsgRingHandoffs:  s.msgRingHandoffs.Load(),
		HandoffFallbacks: s.handoffFallbacks.Load(),
		Spins:            s.spins.Load(),
		PacketsReceived:  s.packetsIn.Load(),
		PacketsSent:      s.packetsOut.Load(),
		PacketsDropped:   s.packetsDropped.Load(),
	}
}
