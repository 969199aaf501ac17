package loopgroup

import (
	"fmt"
	"runtime"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/tasks"
)

// Option configures a Group.
type Option func(*config) error

type config struct {
	loops      int
	name       string
	chooser    ChooserFactory
	engine     []engine.Option
	engineFor  func(i int) []engine.Option
	cpus       []int
	threadName bool
	threadInit []func(i int, l *engine.Loop) error
	threading  engine.Threading
}

// DefaultLoopsFor is the default loop count for threading mode t: one loop
// per GOMAXPROCS for parked loops, which hold a P only while they work; one
// fewer (at least one) for locked loops, which keep a P idle for the Go
// scheduler to hand a sleeping loop's P to (GOMAXPROCS >= loops + 1, see
// the engine package doc). Not Netty's two per core: see the package doc.
func DefaultLoopsFor(t engine.Threading) int {
	n := runtime.GOMAXPROCS(0)
	if t == engine.ThreadingLocked {
		n--
	}
	return max(1, n)
}

// needsLocked reports a thread setting that only a locked loop keeps.
func (c *config) needsLocked() bool {
	return len(c.cpus) > 0 || c.threadName || len(c.threadInit) > 0
}

// threadingMode resolves the group's threading mode: WithThreading, else
// locked when a thread setting needs it, else RINGLOOP_THREADING, else 0:
// the first loop's backend decides (engine.DefaultThreading), and the
// others follow it.
func (c *config) threadingMode() (engine.Threading, error) {
	if c.needsLocked() {
		if c.threading == engine.ThreadingParked {
			return 0, fmt.Errorf("loopgroup: WithCPUAffinity, WithThreadNames and WithThreadInit need engine.ThreadingLocked, not %v", c.threading)
		}
		return engine.ThreadingLocked, nil
	}
	return engine.ResolveThreading(c.threading)
}

// WithThreading sets every loop's threading mode (engine.WithThreading) and
// the default loop count that goes with it (DefaultLoopsFor). Without it the
// loops are locked when WithCPUAffinity, WithThreadNames or WithThreadInit
// is given, else RINGLOOP_THREADING, else the backend's
// engine.DefaultThreading decides (parked, on both backends).
func WithThreading(t engine.Threading) Option {
	return func(c *config) error {
		if t != engine.ThreadingParked && t != engine.ThreadingLocked {
			return fmt.Errorf("loopgroup: threading %v (want engine.ThreadingParked or engine.ThreadingLocked)", t)
		}
		c.threading = t
		return nil
	}
}

// WithLoops sets the number of loops (0: DefaultLoops).
func WithLoops(n int) Option {
	return func(c *config) error {
		if n < 0 {
			return fmt.Errorf("loopgroup: loops %d (expected >= 0; 0 = default)", n)
		}
		c.loops = n
		return nil
	}
}

// WithBackend picks every loop's I/O backend (engine.WithBackend).
func WithBackend(b engine.Backend) Option { return WithEngineOptions(engine.WithBackend(b)) }

// WithKernelProfile makes every loop's driver behave as on an older kernel.
func WithKernelProfile(p engine.KernelProfile) Option {
	return WithEngineOptions(engine.WithKernelProfile(p))
}

// WithIORatio sets every loop's share of time given to I/O, 1..100
// (default 50).
func WithIORatio(r int) Option { return WithEngineOptions(engine.WithIORatio(r)) }

// WithMaxPendingTasks bounds every loop's task ring (default unbounded).
func WithMaxPendingTasks(n int) Option { return WithEngineOptions(engine.WithMaxPendingTasks(n)) }

// WithRejectPolicy decides what a full task ring does (default
// tasks.Reject).
func WithRejectPolicy(p tasks.RejectPolicy) Option {
	return WithEngineOptions(engine.WithRejectPolicy(p))
}

// WithName names the loops "<prefix>-<index>" in logs and metrics (Netty's
// thread factory naming). Without it the prefix is "group-<n>", n counting
// the unnamed groups the process built (from 0): stable across restarts of
// a service that builds its groups in the same order, but a name says what
// the loops serve ("http-0", "workers-1"). The OS threads keep their names
// unless WithThreadNames is given too.
func WithName(prefix string) Option {
	return func(c *config) error {
		if prefix == "" {
			return fmt.Errorf("loopgroup: empty group name")
		}
		c.name = prefix
		return nil
	}
}

// WithThreadNames also gives each loop's OS thread its loop name (the first
// 15 bytes, Linux's limit), as seen by top -H and /proc. Like every thread
// setup it starts the loops in New and selects engine.ThreadingLocked.
func WithThreadNames() Option {
	return func(c *config) error { c.threadName = true; return nil }
}

// WithCPUAffinity pins loop i's OS thread to cpus[i % len(cpus)] with
// sched_setaffinity. The pin is applied by the first task of each loop, so
// the loops start in New; New fails (and shuts the group down) if a CPU is
// refused. It selects engine.ThreadingLocked: only a locked loop keeps its
// thread.
func WithCPUAffinity(cpus ...int) Option {
	return func(c *config) error {
		if len(cpus) == 0 {
			return fmt.Errorf("loopgroup: WithCPUAffinity needs at least one CPU")
		}
		for _, n := range cpus {
			if n < 0 {
				return fmt.Errorf("loopgroup: CPU %d (expected >= 0)", n)
			}
		}
		c.cpus = append([]int(nil), cpus...)
		return nil
	}
}

// WithThreadInit runs fn as the first task of every loop, on the loop's own
// OS thread (Netty's thread factory hook): priority, cgroup or any other
// thread setting. New waits for it and fails if it returns an error. Threads
// whose settings it changes should not return to the Go scheduler's pool:
// call runtime.LockOSThread in fn (without unlocking) and the thread ends
// with its loop. It selects engine.ThreadingLocked.
func WithThreadInit(fn func(index int, l *engine.Loop) error) Option {
	return func(c *config) error {
		if fn == nil {
			return fmt.Errorf("loopgroup: nil thread init")
		}
		c.threadInit = append(c.threadInit, fn)
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

// WithEngineOptions passes options to every loop (a logger, a stall
// detector, driver sizes...).
func WithEngineOptions(opts ...engine.Option) Option {
	return func(c *config) error { c.engine = append(c.engine, opts...); return nil }
}

// WithEngineOptionsFunc passes per-loop options: fn(i) is applied to loop i
// after WithEngineOptions.
func WithEngineOptionsFunc(fn func(i int) []engine.Option) Option {
	return func(c *config) error { c.engineFor = fn; return nil }
}
