package loopgroup

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

// Group is a fixed set of event loops (Netty's MultithreadEventLoopGroup):
// Next picks one through the chooser, the executor methods delegate to Next,
// and shutdown covers every loop. It implements engine.Loops.
type Group struct {
	loops   []*engine.Loop
	index   map[*engine.Loop]int // read-only after New
	load    []loadCounter        // live connections per loop (servers and Dial of this group)
	chooser func() *engine.Loop
	done    chan struct{} // closed once every loop has terminated
	watch   sync.Once     // starts the goroutine that closes done
}

// loadCounter is padded to its own cache line: loops update their counters
// concurrently.
type loadCounter struct {
	n atomic.Int64
	_ [56]byte
}

// newLoop builds a loop (engine.New; tests inject failures).
var newLoop = engine.New

// shutdownTimeout is how long Shutdown and abort give each loop's graceful
// shutdown (engine's own for Loop.Shutdown: Netty's 15 s).
const shutdownTimeout = 15 * time.Second

// ErrCalledFromLoop: a blocking group call (InvokeAll, InvokeAny, Shutdown, Close,
// Dial, Server.Shutdown, Server.Close) was made from one of the group's own
// loops, which could wait for itself. It matches tasks.ErrDeadlock.
var ErrCalledFromLoop = fmt.Errorf("loopgroup: blocking call from a loop of the group would deadlock: %w", tasks.ErrDeadlock)

// New builds a group of loops. The loops start lazily, on their first task or
// connection, unless thread settings (WithThreads) need their threads now. If any loop cannot be built or
// set up, the loops already built are shut down and New returns the error
// (Netty's constructor cleanup).
func New(opts ...Option) (*Group, error) {
	var c config
	for _, o := range opts {
		if err := o(&c); err != nil {
			return nil, err
		}
	}
	// Without WithLoops the count follows the threading mode, which without
	// a choice is the first loop's backend's default: build that loop first.
	n := c.loops
	g := &Group{done: make(chan struct{})}
	prefix := c.name
	if prefix == "" {
		prefix = nextGroupName()
	}
	var th engine.Threading
	for i := 0; i == 0 || i < n; i++ {
		lo := make([]engine.Option, 0, len(c.engine)+4)
		if th != 0 {
			lo = append(lo, engine.WithThreading(th)) // the others run as the first does
		}
		if c.name == "" {
			lo = append(lo, engine.WithName(fmt.Sprintf("%s-%d", prefix, i))) // engine options may name the loops...
		}
		lo = append(lo, c.engine...)
		if c.name != "" {
			lo = append(lo, engine.WithName(fmt.Sprintf("%s-%d", c.name, i))) // ...unless the group has a name
		}
		if c.threads.any() {
			lo = append(lo, engine.WithThreading(engine.ThreadingLocked)) // thread settings need it
		}
		l, err := newLoop(lo...)
		if err != nil {
			g.abort()
			if n == 0 {
				return nil, fmt.Errorf("loopgroup: building loop 0: %w", err)
			}
			return nil, fmt.Errorf("loopgroup: building loop %d of %d: %w", i, n, err)
		}
		if i == 0 {
			th = l.Backend().Threading
			if n == 0 {
				n = defaultLoopsFor(th)
			}
			g.loops = make([]*engine.Loop, 0, n)
			g.index = make(map[*engine.Loop]int, n)
			g.load = make([]loadCounter, n)
		}
		g.index[l] = i
		g.loops = append(g.loops, l)
	}
	cf := c.chooser
	if cf == nil {
		cf = RoundRobin()
	}
	g.chooser = cf(g)
	if g.chooser == nil {
		g.abort()
		return nil, errors.New("loopgroup: chooser factory returned nil")
	}
	if err := g.initThreads(&c.threads); err != nil {
		g.abort()
		return nil, err
	}
	return g, nil
}

// abort shuts down every loop built so far and waits for them (construction
// failed).
func (g *Group) abort() {
	for _, l := range g.loops {
		_ = l.ShutdownGracefully(0, shutdownTimeout)
	}
	for _, l := range g.loops {
		_ = l.Close()
	}
}

// Next returns the loop the chooser picks (engine.Loops).
func (g *Group) Next() *engine.Loop { return g.chooser() }

// groupOf is a group of one existing loop, for Serve: it counts the
// loop's connections and knows its index, and owns nothing (the loop's
// lifecycle stays with its creator).
func groupOf(l *engine.Loop) *Group {
	return &Group{loops: []*engine.Loop{l}, index: map[*engine.Loop]int{l: 0}, load: make([]loadCounter, 1), chooser: l.Next}
}

// Loops returns a copy of the loops, in index order (Netty's iterator;
// its length is the group's executorCount).
func (g *Group) Loops() []*engine.Loop { return append([]*engine.Loop(nil), g.loops...) }

// indexOf returns l's index in the group, or -1 if l is not one of its
// loops.
func (g *Group) indexOf(l *engine.Loop) int {
	if i, ok := g.index[l]; ok {
		return i
	}
	return -1
}

// Connections returns how many connections the group's servers and Dial have
// placed on loop l and not closed yet, hand-offs in flight included (the
// least-connections chooser reads it); 0 for a loop of another group.
func (g *Group) Connections(l *engine.Loop) int {
	if i := g.indexOf(l); i >= 0 {
		return int(g.load[i].n.Load())
	}
	return 0
}

func (g *Group) addLoad(l *engine.Loop, d int64) {
	if i, ok := g.index[l]; ok {
		g.load[i].n.Add(d)
	}
}

// InEventLoop reports whether the caller runs on one of the group's loops.
func (g *Group) InEventLoop() bool {
	for _, l := range g.loops {
		if l.InEventLoop() {
			return true
		}
	}
	return false
}

// Shutdown shuts every loop down with no quiet period (see
// engine.Loop.Shutdown) and waits until all have terminated or ctx is done.
// It returns nil once all have terminated (or the errors of loops whose own
// code stopped them, joined), ctx.Err() if ctx ended first (the shutdown
// goes on; Done tells when it ends), and ErrCalledFromLoop at once when
// called from one of the group's loops, which would wait for itself (the
// shutdown is started all the same).
func (g *Group) Shutdown(ctx context.Context) error {
	for _, l := range g.loops {
		_ = l.ShutdownGracefully(0, shutdownTimeout)
	}
	if g.InEventLoop() {
		return ErrCalledFromLoop
	}
	done := g.Done()
	select {
	case <-done: // first: a terminated group reports so whatever ctx says
	default:
		select {
		case <-done:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	errs := make([]error, len(g.loops))
	for i, l := range g.loops {
		errs[i] = l.Close() // terminated: returns at once
	}
	return errors.Join(errs...)
}

// Close is Shutdown with no deadline (io.Closer).
func (g *Group) Close() error { return g.Shutdown(context.Background()) }

// Done returns a channel closed once every loop has terminated, however
// each was shut down. The first call starts one goroutine that waits for
// the loops and ends with them.
func (g *Group) Done() <-chan struct{} {
	g.watch.Do(g.startWatch)
	return g.done
}

func (g *Group) startWatch() {
	go func() {
		for _, l := range g.loops {
			<-l.Done()
		}
		close(g.done)
	}()
}

// ShutdownGracefully starts Netty's graceful shutdown on every loop (see
// engine.Loop.ShutdownGracefully: the quiet period is why the Netty name is
// kept) and returns without waiting; wait with Shutdown or Done. Invalid
// arguments return an error and change nothing.
func (g *Group) ShutdownGracefully(quiet, timeout time.Duration) error {
	if quiet < 0 {
		return fmt.Errorf("loopgroup: quiet period %v (expected >= 0)", quiet)
	}
	if timeout < quiet {
		return fmt.Errorf("loopgroup: timeout %v (expected >= quiet period %v)", timeout, quiet)
	}
	for _, l := range g.loops {
		_ = l.ShutdownGracefully(quiet, timeout) // valid: checked above
	}
	return nil
}

// State returns the least advanced state among the loops: State() >=
// engine.ShuttingDown once every loop is shutting down, engine.Terminated
// once every loop has terminated.
func (g *Group) State() engine.State {
	s := engine.Terminated
	for _, l := range g.loops {
		s = min(s, l.State())
	}
	return s
}

// String describes the group for logs.
func (g *Group) String() string {
	return fmt.Sprintf("loopgroup(%d loops)", len(g.loops))
}

var _ engine.Loops = (*Group)(nil)

// groupSeq numbers the groups built without WithName.
var groupSeq atomic.Uint64

func nextGroupName() string { return fmt.Sprintf("group-%d", groupSeq.Add(1)-1) }
