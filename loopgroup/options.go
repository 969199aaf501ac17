package loopgroup

import (
	"fmt"
	"runtime"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/internal/option"
)

// Option configures a Group.
type Option func(*config) error

type config struct {
	loops   int
	name    string
	chooser ChooserFactory
	engine  []engine.Option
	threads Threads
}

// defaultLoopsFor is the default loop count for threading mode t (see
// WithLoops).
func defaultLoopsFor(t engine.Threading) int {
	n := runtime.GOMAXPROCS(0)
	if t == engine.ThreadingLocked {
		n--
	}
	return max(1, n)
}

// WithLoops sets the number of loops. The default follows the loops'
// threading mode: one loop per GOMAXPROCS for parked loops, which hold a P
// only while they work; one fewer (at least one) for locked loops, which
// keep a P idle for the Go scheduler to hand a sleeping loop's P to
// (GOMAXPROCS >= loops + 1, see the engine package doc). Not Netty's two per
// core: see the package doc.
func WithLoops(n int) Option {
	return option.NonNegative("loopgroup: loops", n, "; 0 = default", func(c *config) { c.loops = n })
}

// WithName names the loops "<prefix>-<index>" in logs and metrics (Netty's
// thread factory naming). Without it the prefix is "group-<n>", n counting
// the unnamed groups the process built (from 0): stable across restarts of
// a service that builds its groups in the same order, but a name says what
// the loops serve ("http-0", "workers-1"). The OS threads keep their names
// unless Threads.Names is set too.
func WithName(prefix string) Option {
	return option.Required(prefix, "loopgroup: empty group name", func(c *config) { c.name = prefix })
}

// Threads are settings of the loops' OS threads, applied by the first task
// of every loop, on its own thread: so they start the loops in New, which
// waits for them and fails (shutting the group down) if one fails. They need
// locked loops: they select engine.ThreadingLocked, over any
// engine.WithThreading, since only a locked loop keeps its thread.
type Threads struct {
	// Names gives each loop's OS thread its loop name (the first 15 bytes,
	// Linux's limit), as seen by top -H and /proc.
	Names bool
	// CPUs pins loop i's thread to CPUs[i % len(CPUs)] with
	// sched_setaffinity.
	CPUs []int
	// Init runs last (Netty's thread factory hook): priority, cgroup or any
	// other thread setting. Threads whose settings it changes should not
	// return to the Go scheduler's pool: call runtime.LockOSThread in it
	// (without unlocking) and the thread ends with its loop.
	Init func(index int, l *engine.Loop) error
}

// any reports whether t sets anything.
func (t *Threads) any() bool { return t.Names || len(t.CPUs) > 0 || t.Init != nil }

// WithThreads sets the loops' thread settings (replacing an earlier
// WithThreads).
func WithThreads(t Threads) Option {
	return func(c *config) error {
		for _, n := range t.CPUs {
			if n < 0 {
				return fmt.Errorf("loopgroup: CPU %d (expected >= 0)", n)
			}
		}
		t.CPUs = append([]int(nil), t.CPUs...)
		c.threads = t
		return nil
	}
}

// WithChooser sets how Next picks a loop (default RoundRobin).
func WithChooser(f ChooserFactory) Option {
	return func(c *config) error {
		if f == nil {
			return fmt.Errorf("loopgroup: nil chooser factory")
		}
		c.chooser = f
		return nil
	}
}

// WithEngineOptions passes options to every loop: backend, threading mode,
// kernel profile and driver sizes, ioRatio, task-ring bound, logger, stall
// detector... A loop's name is the group's (WithName) whatever they say.
// Without engine.WithThreading the first loop's backend decides the mode
// (engine's default), and the other loops follow it.
func WithEngineOptions(opts ...engine.Option) Option {
	return func(c *config) error { c.engine = append(c.engine, opts...); return nil }
}
