package loopgroup_test

import (
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/internal/testenv"
	"github.com/ringloop/ringloop/loopgroup"
	"github.com/ringloop/ringloop/tasks"
)

// TestRoundRobinExact: Next visits the loops in index order, for a power of
// two (mask) and for another count (modulo).
func TestRoundRobinExact(t *testing.T) {
	testenv.ForEachBackend(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		for _, n := range []int{1, 3, 4, 5, 8} {
			g := newGroup(t, c, loopgroup.WithLoops(n))
			for k := range 5 * n {
				require.Same(t, g.Loops()[k%n], g.Next(), "n=%d call %d", n, k)
			}
		}
	})
}

// TestRoundRobinConcurrent: from many goroutines at once every loop is
// picked exactly as often.
func TestRoundRobinConcurrent(t *testing.T) {
	testenv.CheckLeaks(t)
	for _, n := range []int{3, 4} {
		g, err := loopgroup.New(loopgroup.WithLoops(n), loopgroup.WithEngineOptions(engine.WithBackend(engine.BackendEpoll)))
		require.NoError(t, err)
		const per = 3000
		counts := make([]atomic.Int64, n)
		index := map[*engine.Loop]int{}
		for i, l := range g.Loops() {
			index[l] = i
		}
		done := make(chan struct{})
		for range 4 {
			go func() {
				for range per * n / 4 {
					counts[index[g.Next()]].Add(1)
				}
				done <- struct{}{}
			}()
		}
		for range 4 {
			<-done
		}
		for i := range counts {
			assert.Equal(t, int64(per), counts[i].Load(), "n=%d loop %d", n, i)
		}
		require.NoError(t, g.Close())
	}
}

// TestLeastConnectionsSkew: four long-lived connections on each of two
// loops, then three on loop 0 close. Least-connections sends the next three
// to loop 0, back to even; round robin would have split them.
func TestLeastConnectionsSkew(t *testing.T) {
	testenv.ForEachBackend(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		g := newGroup(t, c, loopgroup.WithLoops(2), loopgroup.WithChooser(loopgroup.LeastConnections()))
		h := newCounting()
		s, err := loopgroup.Serve(g, "tcp", "127.0.0.1:0", h)
		require.NoError(t, err)
		defer shutdownServer(t, s)
		addr := s.Addr().String()

		var conns []net.Conn
		for i := range 8 {
			conns = append(conns, echoOnce(t, addr, i))
		}
		defer func() { closeAll(conns) }()
		assert.Equal(t, []int{4, 4}, h.perLoop(g))
		assert.Equal(t, []int{4, 4}, []int{g.Connections(g.Loops()[0]), g.Connections(g.Loops()[1])})

		// Close three connections served by loop 0: the skew.
		closed := 0
		for i, nc := range conns {
			if closed < 3 && h.loopOf(nc) == g.Loops()[0] {
				nc.Close()
				conns[i] = nil
				closed++
			}
		}
		require.Equal(t, 3, closed)
		testenv.Eventually(t, 5*time.Second, "closes counted", func() bool { return g.Connections(g.Loops()[0]) == 1 })

		for i := range 3 {
			conns = append(conns, echoOnce(t, addr, 100+i))
		}
		assert.Equal(t, []int{4, 4}, []int{g.Connections(g.Loops()[0]), g.Connections(g.Loops()[1])}, "the new ones filled loop 0")
		assert.Equal(t, []int{7, 4}, h.perLoop(g), "opened per loop in total")
	})
}

// TestCustomChooser: a pluggable chooser decides Next, Execute and the
// loops of accepted connections.
func TestCustomChooser(t *testing.T) {
	testenv.ForEachBackend(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		var calls atomic.Int64
		g := newGroup(t, c, loopgroup.WithLoops(3), loopgroup.WithChooser(func(g *loopgroup.Group) func() *engine.Loop {
			loops := g.Loops()
			last := loops[len(loops)-1]
			return func() *engine.Loop { calls.Add(1); return last }
		}))
		for range 5 {
			assert.Same(t, g.Loops()[2], g.Next())
		}
		ran := make(chan *engine.Loop, 1)
		require.NoError(t, g.Execute(tasks.Func(func() {
			for _, l := range g.Loops() {
				if l.InEventLoop() {
					ran <- l
				}
			}
		})))
		assert.Same(t, g.Loops()[2], <-ran)
		h := newCounting()
		s, err := loopgroup.Serve(g, "tcp", "127.0.0.1:0", h)
		require.NoError(t, err)
		closeAll(echoMany(t, s.Addr().String(), 4))
		shutdownServer(t, s)
		assert.Equal(t, []int{0, 0, 4}, h.perLoop(g))
		assert.GreaterOrEqual(t, calls.Load(), int64(5+1+1+4))
	})
}
