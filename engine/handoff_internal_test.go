package engine

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/ringloop/ringloop/internal/driver"
	"github.com/ringloop/ringloop/internal/uringcheck"
)

// openedOn records the loop each connection opens on.
type openedOn struct{ opened chan *Conn }

func (h *openedOn) OnOpen(c *Conn)       { h.opened <- c }
func (h *openedOn) OnData(*Conn, []byte) {}
func (h *openedOn) OnClose(*Conn, error) {}
func (h *openedOn) waitOpen(t *testing.T) *Conn {
	t.Helper()
	select {
	case c := <-h.opened:
		return c
	case <-time.After(10 * time.Second):
		t.Fatal("the handed-off connection never opened")
		return nil
	}
}

// handoffPair builds two started io_uring loops and a listener on a whose
// connections b serves. The loops are locked: MSG_RING is the locked ring's
// (a parked loop's readiness variant hands off through task rings).
func handoffPair(t *testing.T) (a, b *Loop, ln *Listener, h *openedOn) {
	t.Helper()
	if !uringBuilt {
		t.Skip("built without liburing: no io_uring driver, no MSG_RING (the epoll build hands off through task rings)")
	}
	uringcheck.Need(t)
	var err error
	a, err = New(WithBackend(BackendUring), WithThreading(ThreadingLocked))
	require.NoError(t, err)
	t.Cleanup(func() { _ = a.Close() })
	b, err = New(WithBackend(BackendUring), WithThreading(ThreadingLocked))
	require.NoError(t, err)
	t.Cleanup(func() { _ = b.Close() })
	if !a.Backend().Features.MsgRing {
		t.Skip("this kernel has no IORING_OP_MSG_RING")
	}
	for _, l := range []*Loop{a, b} {
		_, err := Submit(l, func() (struct{}, error) { return struct{}{}, nil }).Await(context.Background())
		require.NoError(t, err)
	}
	h = &openedOn{opened: make(chan *Conn, 4)}
	ln, err = Listen(a, "tcp", "127.0.0.1:0", h, WithWorkers(b))
	require.NoError(t, err)
	t.Cleanup(func() { _ = ln.Close() })
	return a, b, ln, h
}

// socketFD returns one end of a fresh socket pair, standing for an accepted
// connection (the other end is closed at cleanup).
func socketFD(t *testing.T) int {
	t.Helper()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	require.NoError(t, err)
	t.Cleanup(func() { unix.Close(fds[1]) })
	return fds[0]
}

func onLoopWait(t *testing.T, l *Loop, fn func()) {
	t.Helper()
	_, err := Submit(l, func() (struct{}, error) { fn(); return struct{}{}, nil }).Await(context.Background())
	require.NoError(t, err)
}

// TestHandoffRefusedByKernelFallsBack: a MSG_RING hand-off the kernel
// refuses after MsgRing returned (its report comes back with an errno) is
// served through the task ring, and every in-flight count comes down.
func TestHandoffRefusedByKernelFallsBack(t *testing.T) {
	a, b, ln, h := handoffPair(t)
	fd := socketFD(t)
	in := b.handoffInbox()
	onLoopWait(t, a, func() {
		// What sendMsgRing leaves behind once MsgRing returned nil.
		in.inflight.Add(1)
		ln.ho.inflight.Add(1)
		a.stats.msgRingHandoffs.Add(1)
		s := &sentHandoff{ln: ln, target: b, fd: fd}
		s.idx, s.gen = a.reg.add(s)
		// The driver's report: refused.
		a.onCompletion(&driver.Completion{Tag: makeTag(s.idx, s.gen, driver.OpMsgSent), Res: -int32(unix.EBADFD)})
		r, _ := a.reg.lookup(makeTag(s.idx, s.gen, driver.OpMsgSent))
		require.Nil(t, r, "the report releases the registration")
	})
	c := h.waitOpen(t)
	require.Same(t, b, c.Loop())
	require.Equal(t, fd, c.FD(), "the fd the message carried is served")
	m := a.Metrics()
	require.Zero(t, m.MsgRingHandoffs, "the refused message is not counted as posted")
	require.EqualValues(t, 1, m.HandoffFallbacks)
	require.Zero(t, in.inflight.Load(), "the target's count came down")
	require.Zero(t, ln.ho.inflight.Load(), "the listener's count came down")
}

// TestHandoffMsgRingSettles: a MSG_RING hand-off is served, and its report
// (posted) releases the sender's registration and both counts.
func TestHandoffMsgRingSettles(t *testing.T) {
	a, b, ln, h := handoffPair(t)
	in := &b.inbox
	fd2 := socketFD(t)
	onLoopWait(t, a, func() { ln.handOff(b, fd2) })
	require.Equal(t, fd2, h.waitOpen(t).FD())
	m := a.Metrics()
	require.EqualValues(t, 1, m.MsgRingHandoffs)
	require.Zero(t, m.HandoffFallbacks)
	// The sender's report (on a) and the receiver's count-down (on b, after
	// OnOpen returned) come from two loops: wait for both.
	deadline := time.Now().Add(10 * time.Second)
	for {
		var live int
		onLoopWait(t, a, func() { live = a.reg.live })
		if live == 1 && in.inflight.Load() == 0 && ln.ho.inflight.Load() == 0 { // the listener only
			break
		}
		require.True(t, time.Now().Before(deadline), "the sent hand-off was never settled: %d registrations, %d in flight to the target, %d from the listener",
			live, in.inflight.Load(), ln.ho.inflight.Load())
		time.Sleep(time.Millisecond)
	}
}

// TestHandoffSlotReleased: a listener that sent with MSG_RING holds a slot
// in the target's inbox until it has closed and its messages arrived; then
// the slot is free and a message still naming it is stale.
func TestHandoffSlotReleased(t *testing.T) {
	a, b, ln, h := handoffPair(t)
	fd := socketFD(t)
	onLoopWait(t, a, func() { ln.handOff(b, fd) })
	require.Equal(t, fd, h.waitOpen(t).FD())
	senders := func() int {
		b.inbox.mu.RLock()
		defer b.inbox.mu.RUnlock()
		return b.inbox.senders.live
	}
	require.Equal(t, 1, senders(), "the listener holds a slot in the target's inbox")
	var rt handoffRoute
	onLoopWait(t, a, func() { rt = ln.ho.routes[b] })
	require.NoError(t, ln.Close())
	deadline := time.Now().Add(10 * time.Second)
	for senders() != 0 {
		require.True(t, time.Now().Before(deadline), "the closed listener's slot was never released")
		time.Sleep(time.Millisecond)
	}
	require.Nil(t, b.inbox.sender(rt.id, rt.gen), "a late message naming the slot is stale")
}
