package loopgroup

import (
	"sync/atomic"

	"github.com/ringloop/ringloop/engine"
)

// ChooserFactory builds a group's chooser once its loops exist (Netty's
// EventExecutorChooserFactory): the function Group.Next calls to pick the
// group's next loop (Netty's EventExecutorChooser). It is called from any
// goroutine, on every Execute, accept and Dial: keep it cheap and
// allocation-free. The factory may keep g to read Loops and Connections.
type ChooserFactory func(g *Group) func() *engine.Loop

// RoundRobin is Netty's default chooser: loops in turn, through a mask when
// the count is a power of two and a modulo otherwise. The counter is an
// unsigned 64-bit integer, so it never turns negative and the rotation stays
// exact.
func RoundRobin() ChooserFactory {
	return func(g *Group) func() *engine.Loop {
		loops := g.Loops()
		if n := len(loops); n&(n-1) == 0 {
			return (&powerOfTwoChooser{loops: loops, mask: uint64(n - 1)}).Next
		}
		return (&genericChooser{loops: loops, n: uint64(len(loops))}).Next
	}
}

// powerOfTwoChooser is Netty's PowerOfTwoEventExecutorChooser.
type powerOfTwoChooser struct {
	idx   atomic.Uint64
	loops []*engine.Loop
	mask  uint64
}

func (c *powerOfTwoChooser) Next() *engine.Loop {
	return c.loops[(c.idx.Add(1)-1)&c.mask]
}

// genericChooser is Netty's GenericEventExecutorChooser.
type genericChooser struct {
	idx   atomic.Uint64
	loops []*engine.Loop
	n     uint64
}

func (c *genericChooser) Next() *engine.Loop {
	return c.loops[(c.idx.Add(1)-1)%c.n]
}

// LeastConnections picks the loop with the fewest live connections placed by
// the group's servers and Dial (Group.Connections), ties going round robin.
// A connection counts from the moment it is assigned, before it reaches its
// loop, so a burst of accepts spreads at once. Use it when connections live
// for very different times, which skews a plain rotation. Loops fed only by
// tasks all count zero, so for plain Execute it rotates.
func LeastConnections() ChooserFactory {
	return func(g *Group) func() *engine.Loop { return (&leastConnChooser{g: g}).Next }
}

type leastConnChooser struct {
	g   *Group
	rot atomic.Uint64
}

func (c *leastConnChooser) Next() *engine.Loop {
	n := len(c.g.loops)
	start := int((c.rot.Add(1) - 1) % uint64(n))
	best, bestLoad := start, c.g.load[start].n.Load()
	for k := 1; k < n && bestLoad > 0; k++ {
		i := start + k
		if i >= n {
			i -= n
		}
		if v := c.g.load[i].n.Load(); v < bestLoad {
			best, bestLoad = i, v
		}
	}
	return c.g.loops[best]
}
