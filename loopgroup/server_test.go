package loopgroup_test

import (
	"context"
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/internal/driver"
	"github.com/ringloop/ringloop/internal/testenv"
	"github.com/ringloop/ringloop/loopgroup"
)

// TestMainSubHandoff: a boss group accepts, a worker group serves; every
// connection reaches a worker and is echoed. The hand-off goes through
// MSG_RING exactly where both rings have it (io_uring, kernel profile 5.18
// or newer) and as a task everywhere else (epoll, the older profiles).
func TestMainSubHandoff(t *testing.T) {
	n := scale(60, 20)
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		boss := newGroup(t, c, loopgroup.WithLoops(1), loopgroup.WithName("boss"))
		workers := newGroup(t, c, loopgroup.WithLoops(2), loopgroup.WithName("worker"))
		h := newCounting()
		s, err := loopgroup.Serve(workers, "tcp", "127.0.0.1:0", h, loopgroup.WithBoss(boss))
		require.NoError(t, err)
		conns := echoMany(t, s.Addr().String(), n)
		defer closeAll(conns)

		assert.Equal(t, []int{n / 2, n / 2}, h.perLoop(workers), "round robin over the workers")
		st := groupMetrics(boss)
		assert.EqualValues(t, n, st.Accepted)
		assert.EqualValues(t, n, st.Handoffs)
		// MSG_RING where the workers' kernel has it (the uring tests
		// check the probe against the kernel).
		if workers.Loops()[0].Backend().Features.MsgRing {
			assert.EqualValues(t, n, st.MsgRingHandoffs)
		} else {
			assert.Zero(t, st.MsgRingHandoffs+st.HandoffFallbacks)
		}
		assert.Equal(t, n, s.Connections())
		assert.Equal(t, n/2, workers.Connections(workers.Loops()[0]))
		assert.Equal(t, n/2, workers.Connections(workers.Loops()[1]))
		closeAll(conns)
		shutdownServer(t, s)
		assert.Equal(t, 0, s.Connections())
		assert.Equal(t, 0, workers.Connections(workers.Loops()[0])+workers.Connections(workers.Loops()[1]))
	})
}

// groupMetrics sums the accept and hand-off counts of g's loops.
func groupMetrics(g *loopgroup.Group) engine.Metrics {
	var t engine.Metrics
	for _, l := range g.Loops() {
		m := l.Metrics()
		t.Accepted += m.Accepted
		t.Handoffs += m.Handoffs
		t.MsgRingHandoffs += m.MsgRingHandoffs
		t.HandoffFallbacks += m.HandoffFallbacks
	}
	return t
}

// TestSingleReactor: a group of one is both boss and worker: the same loop
// accepts and serves, with no hand-off.
func TestSingleReactor(t *testing.T) {
	testenv.ForEachBackend(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		g := newGroup(t, c, loopgroup.WithLoops(1))
		h := newCounting()
		s, err := loopgroup.Serve(g, "tcp", "127.0.0.1:0", h)
		require.NoError(t, err)
		conns := echoMany(t, s.Addr().String(), 20)
		closeAll(conns)
		shutdownServer(t, s)
		assert.Equal(t, []int{20}, h.perLoop(g))
		st := groupMetrics(g)
		assert.EqualValues(t, 20, st.Accepted)
		assert.Zero(t, st.Handoffs)
		assert.Equal(t, s.Listeners()[0].Loop(), g.Loops()[0])
	})
}

// TestServeOneLoop: Serve takes one *engine.Loop as a group of one, with
// the server's connection count and shutdown, and a boss group may accept
// for it; another engine.Loops is refused with an error naming its type.
func TestServeOneLoop(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		l, err := engine.New(c.Options()...)
		require.NoError(t, err)
		defer l.Close()
		h := newCounting()
		s, err := loopgroup.Serve(l, "tcp", "127.0.0.1:0", h)
		require.NoError(t, err)
		conns := echoMany(t, s.Addr().String(), 5)
		testenv.Eventually(t, 30*time.Second, "5 connections counted", func() bool { return s.Connections() == 5 })
		closeAll(conns)
		shutdownServer(t, s)
		require.Zero(t, s.Connections())
		require.Equal(t, l, s.Listeners()[0].Loop())

		boss := newGroup(t, c, loopgroup.WithLoops(1))
		s2, err := loopgroup.Serve(l, "tcp", "127.0.0.1:0", h, loopgroup.WithBoss(boss))
		require.NoError(t, err)
		closeAll(echoMany(t, s2.Addr().String(), 3))
		shutdownServer(t, s2)
		require.Equal(t, boss.Loops()[0], s2.Listeners()[0].Loop())

		_, err = loopgroup.Serve(otherLoops{l}, "tcp", "127.0.0.1:0", h)
		require.ErrorContains(t, err, "otherLoops")
	})
}

// otherLoops is an engine.Loops that is neither a group nor a loop.
type otherLoops struct{ engine.Loops }

// TestSameGroupBossAndWorkers: without WithBoss a group of several loops
// accepts on one and spreads over all, itself included.
func TestSameGroupBossAndWorkers(t *testing.T) {
	testenv.ForEachBackend(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		g := newGroup(t, c, loopgroup.WithLoops(2))
		h := newCounting()
		s, err := loopgroup.Serve(g, "tcp", "127.0.0.1:0", h)
		require.NoError(t, err)
		conns := echoMany(t, s.Addr().String(), 20)
		closeAll(conns)
		shutdownServer(t, s)
		assert.Equal(t, []int{10, 10}, h.perLoop(g))
		st := groupMetrics(g)
		assert.EqualValues(t, 20, st.Accepted)
		assert.EqualValues(t, 10, st.Handoffs)
	})
}

// TestListenerPerLoop: every worker loop owns a listening socket on one port
// and accepts for itself; the kernel spreads the connections over them.
func TestListenerPerLoop(t *testing.T) {
	testenv.ForEachBackend(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		g := newGroup(t, c, loopgroup.WithLoops(2))
		h := newCounting()
		s, err := loopgroup.Serve(g, "tcp", "127.0.0.1:0", h, loopgroup.WithListenerPerLoop())
		require.NoError(t, err)
		lns := s.Listeners()
		require.Len(t, lns, 2)
		assert.Equal(t, lns[0].Addr().String(), lns[1].Addr().String())
		assert.NotEqual(t, lns[0].Loop(), lns[1].Loop())
		n := 64
		conns := echoMany(t, s.Addr().String(), n)
		per := h.perLoop(g)
		assert.Equal(t, n, per[0]+per[1])
		// 64 connections hashed over two sockets: all on one has odds 2^-63.
		assert.Positive(t, per[0])
		assert.Positive(t, per[1])
		assert.Equal(t, per, []int{g.Connections(g.Loops()[0]), g.Connections(g.Loops()[1])})
		st := groupMetrics(g)
		assert.EqualValues(t, n, st.Accepted)
		assert.Zero(t, st.Handoffs, "no hand-off")
		closeAll(conns)
		shutdownServer(t, s)
		_, err = loopgroup.Serve(g, "unix", t.TempDir()+"/s", h, loopgroup.WithListenerPerLoop())
		assert.Error(t, err, "SO_REUSEPORT needs TCP")
	})
}

// TestReusePortOption: engine.WithReusePort means what it means in engine,
// SO_REUSEPORT on the one listening socket, so that a second server can bind
// the same port; it does not open a listener per loop.
func TestReusePortOption(t *testing.T) {
	testenv.ForEachBackend(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		g := newGroup(t, c, loopgroup.WithLoops(2))
		h := newCounting()
		reuse := loopgroup.WithConnOptions(engine.WithSocketOptions(engine.SocketOptions{ReusePort: true}))
		s1, err := loopgroup.Serve(g, "tcp", "127.0.0.1:0", h, reuse)
		require.NoError(t, err)
		require.Len(t, s1.Listeners(), 1)
		s2, err := loopgroup.Serve(g, "tcp", s1.Addr().String(), h, reuse)
		require.NoError(t, err, "SO_REUSEPORT on both sockets lets them share the port")
		require.Len(t, s2.Listeners(), 1)
		assert.Equal(t, s1.Addr().String(), s2.Addr().String())
		closeAll(echoMany(t, s1.Addr().String(), 4))
		shutdownServer(t, s2)
		shutdownServer(t, s1)
	})
}

// TestServerShutdownWaits: Shutdown stops accepting at once and returns when
// the last connection closes by itself.
func TestServerShutdownWaits(t *testing.T) {
	testenv.ForEachBackend(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		g := newGroup(t, c, loopgroup.WithLoops(2))
		h := newCounting()
		s, err := loopgroup.Serve(g, "tcp", "127.0.0.1:0", h)
		require.NoError(t, err)
		addr := s.Addr().String()
		conns := echoMany(t, addr, 4)
		done := make(chan error, 1)
		go func() { done <- s.Shutdown(context.Background()) }()
		// Accepting stops: once the socket is closed a new dial is refused.
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_, err = s.Listeners()[0].Closed().Await(ctx)
		require.NoError(t, err)
		conn, err := net.Dial("tcp", addr)
		if err == nil {
			conn.Close()
		}
		require.ErrorIs(t, err, errConnRefused(), "dial after Done")
		select {
		case err := <-done:
			t.Fatalf("Shutdown returned %v with 4 connections open", err)
		default:
		}
		// The open connections still work.
		_ = echoOnceOn(t, conns[0])
		closeAll(conns[:3])
		select {
		case err := <-done:
			t.Fatalf("Shutdown returned %v with a connection open", err)
		default:
		}
		closeAll(conns[3:])
		select {
		case err := <-done:
			require.NoError(t, err)
		case <-time.After(10 * time.Second):
			t.Fatal("Shutdown did not return after the last connection closed")
		}
		assert.Equal(t, 4, h.closedCount())
	})
}

func echoOnceOn(t *testing.T, c net.Conn) error {
	t.Helper()
	_, err := c.Write([]byte("x"))
	require.NoError(t, err)
	b := make([]byte, 1)
	_, err = io.ReadFull(c, b)
	require.NoError(t, err)
	return nil
}

// TestServerShutdownDeadline: at ctx's deadline Shutdown closes the
// remaining connections (the peers read EOF) and returns ctx's error.
func TestServerShutdownDeadline(t *testing.T) {
	testenv.ForEachBackend(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		g := newGroup(t, c, loopgroup.WithLoops(2))
		h := newCounting()
		s, err := loopgroup.Serve(g, "tcp", "127.0.0.1:0", h)
		require.NoError(t, err)
		conns := echoMany(t, s.Addr().String(), 6)
		defer closeAll(conns)
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		err = s.Shutdown(ctx)
		require.ErrorIs(t, err, context.DeadlineExceeded)
		assert.Equal(t, 0, s.Connections())
		assert.Equal(t, 6, h.closedCount())
		for _, nc := range conns {
			_ = nc.SetReadDeadline(time.Now().Add(5 * time.Second))
			_, err := nc.Read(make([]byte, 1))
			assert.ErrorIs(t, err, io.EOF)
		}
		// Close after Shutdown is a no-op that succeeds.
		require.NoError(t, s.Close())
	})
}

// TestServerClose closes every connection at once.
func TestServerClose(t *testing.T) {
	testenv.ForEachBackend(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		g := newGroup(t, c, loopgroup.WithLoops(2))
		h := newCounting()
		s, err := loopgroup.Serve(g, "tcp", "127.0.0.1:0", h)
		require.NoError(t, err)
		conns := echoMany(t, s.Addr().String(), 5)
		defer closeAll(conns)
		require.NoError(t, s.Close())
		assert.Equal(t, 5, h.closedCount())
		assert.Equal(t, 0, g.Connections(g.Loops()[0])+g.Connections(g.Loops()[1]))
	})
}

// TestServeOptions: connection options reach the accepted sockets (no
// TCP_NODELAY when asked) and bad options fail Serve.
func TestServeOptions(t *testing.T) {
	testenv.ForEachBackend(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		g := newGroup(t, c, loopgroup.WithLoops(1))
		nodelay := make(chan int, 1)
		h := &probe{fn: func(conn *engine.Conn) {
			v, _ := getsockoptNoDelay(conn.FD())
			nodelay <- v
		}}
		s, err := loopgroup.Serve(g, "tcp", "127.0.0.1:0", h, loopgroup.WithConnOptions(engine.WithSocketOptions(engine.SocketOptions{Nagle: true}), engine.WithSocketOptions(engine.SocketOptions{Backlog: 16})))
		require.NoError(t, err)
		nc := echoOnce(t, s.Addr().String(), 0)
		assert.Equal(t, 0, <-nodelay)
		nc.Close()
		shutdownServer(t, s)

		_, err = loopgroup.Serve(g, "tcp", "127.0.0.1:0", h, loopgroup.WithConnOptions(engine.WithSocketOptions(engine.SocketOptions{Backlog: -1})))
		assert.Error(t, err)
		_, err = loopgroup.Serve(g, "tcp", "127.0.0.1:0", nil)
		assert.Error(t, err)
		_, err = loopgroup.Serve(g, "tcp", "127.0.0.1:0", h, loopgroup.WithBoss(nil))
		assert.Error(t, err)
	})
}

// TestGroupDial: Dial picks Next() and the connection is served there for
// life; failures undo the connection count.
func TestGroupDial(t *testing.T) {
	testenv.ForEachBackend(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		srv := newGroup(t, c, loopgroup.WithLoops(1))
		s, err := loopgroup.Serve(srv, "tcp", "127.0.0.1:0", newCounting())
		require.NoError(t, err)
		defer shutdownServer(t, s)

		g := newGroup(t, c, loopgroup.WithLoops(2))
		h := newCounting()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		var cs []*engine.Conn
		for range 4 {
			conn, err := g.Dial(ctx, "tcp", s.Addr().String(), h)
			require.NoError(t, err)
			cs = append(cs, conn)
		}
		assert.Equal(t, g.Loops()[0], cs[0].Loop())
		assert.Equal(t, g.Loops()[1], cs[1].Loop())
		assert.Equal(t, 2, g.Connections(g.Loops()[0]))
		assert.Equal(t, 2, g.Connections(g.Loops()[1]))
		for _, conn := range cs {
			require.NoError(t, conn.Close())
		}
		testenv.Eventually(t, 5*time.Second, "dialled connections closed", func() bool {
			return g.Connections(g.Loops()[0])+g.Connections(g.Loops()[1]) == 0
		})

		// A refused dial leaves no count behind.
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		addr := ln.Addr().String()
		ln.Close()
		_, err = g.Dial(ctx, "tcp", addr, h)
		require.Error(t, err)
		assert.True(t, errors.Is(err, errConnRefused()), "got %v", err)
		assert.Equal(t, 0, g.Connections(g.Loops()[0])+g.Connections(g.Loops()[1]))
	})
}

// probe is an echo handler that runs fn in OnOpen.
type probe struct {
	counting
	fn func(*engine.Conn)
}

func (p *probe) OnOpen(c *engine.Conn) { p.fn(c) }

var _ = driver.Native
