package engine

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/ringloop/ringloop/internal/driver"
	"github.com/ringloop/ringloop/tasks"
)

// Option configures a Loop.
type Option func(*config) error

type config struct {
	backend        Backend
	drv            driver.Config
	ioRatio        int
	maxPending     int
	reject         tasks.RejectPolicy
	logger         *slog.Logger
	name           string
	parent         Loops
	stallThreshold time.Duration
	onStall        func(StallReport)
	busyPoll       time.Duration
	spinLimit      time.Duration                              // adaptive spin (WithAdaptiveSpin)
	threading      Threading                                  // 0: RINGLOOP_THREADING, else the backend's DefaultThreading
	newDriver      func(driver.Config) (driver.Driver, error) // tests: inject a driver
	testFault      func(at string)                            // tests: called as the engine's own code (see export_test.go)
}

func defaultConfig() config {
	return config{
		backend:        BackendAuto,
		ioRatio:        DefaultIORatio,
		reject:         tasks.Reject(),
		logger:         slog.Default(),
		spinLimit:      DefaultSpinLimit,
		stallThreshold: DefaultStallThreshold,
	}
}

// Defaults taken from Netty.
const (
	// DefaultIORatio gives I/O and tasks equal time.
	DefaultIORatio = 50
	// DefaultQuietPeriod and DefaultShutdownTimeout are Netty's defaults
	// for ShutdownGracefully; Shutdown and Close pass DefaultShutdownTimeout
	// (with no quiet period it never comes into play).
	DefaultQuietPeriod     = 2 * time.Second
	DefaultShutdownTimeout = 15 * time.Second
)

// WithBackend picks the I/O backend; the default is BackendAuto, which the
// RINGLOOP_BACKEND environment variable can override.
func WithBackend(b Backend) Option {
	return func(c *config) error { c.backend = b; return nil }
}

// WithKernelProfile makes the driver behave as on an older kernel; the default
// comes from RINGLOOP_KERNEL_PROFILE, else native.
func WithKernelProfile(p KernelProfile) Option {
	return func(c *config) error {
		pp, err := driver.ParseProfile(string(p))
		if err != nil {
			return err
		}
		c.drv.Profile = pp
		return nil
	}
}

// WithDriverConfig sets the driver's ring and buffer sizes.
func WithDriverConfig(dc DriverConfig) Option {
	return func(c *config) error {
		if err := dc.check(); err != nil {
			return err
		}
		c.drv.Entries, c.drv.CQEntries = dc.Entries, dc.CQEntries
		c.drv.BufferSize, c.drv.BufferCount = dc.BufferSize, dc.BufferCount
		return nil
	}
}

// WithIORatio sets the share of time given to I/O, 1..100 (default 50);
// 100 runs tasks without a time limit.
func WithIORatio(r int) Option {
	return func(c *config) error {
		if err := checkIORatio(r); err != nil {
			return err
		}
		c.ioRatio = r
		return nil
	}
}

// WithMaxPendingTasks bounds the task ring (rounded up to a power of two, at
// least 16). The default is unbounded, as Netty's.
func WithMaxPendingTasks(n int) Option {
	return func(c *config) error {
		if n < 0 {
			return fmt.Errorf("engine: max pending tasks %d (expected >= 0; 0 = unbounded)", n)
		}
		c.maxPending = n
		return nil
	}
}

// WithRejectPolicy decides what Execute does when a bounded ring is full
// (default tasks.Reject: fail with ErrRejected).
func WithRejectPolicy(p tasks.RejectPolicy) Option {
	return func(c *config) error {
		if p == nil {
			return fmt.Errorf("engine: nil reject policy")
		}
		c.reject = p
		return nil
	}
}

// WithLogger sets where the loop reports panics, stalls and fallbacks.
func WithLogger(l *slog.Logger) Option {
	return func(c *config) error {
		if l == nil {
			return fmt.Errorf("engine: nil logger")
		}
		c.logger = l
		return nil
	}
}

// WithName names the loop in logs and metrics. Without it a loop is named
// "loop-<n>", n counting the loops the process built (from 0), so a service
// that builds its loops in the same order names them the same at every
// start; a loopgroup names its loops "<group>-<index>".
func WithName(name string) Option {
	return func(c *config) error {
		if name == "" {
			return fmt.Errorf("engine: empty loop name")
		}
		c.name = name
		return nil
	}
}

// WithParent records the group a loop belongs to (returned by Parent).
func WithParent(p Loops) Option {
	return func(c *config) error { c.parent = p; return nil }
}

// WithStallDetector sets the stall detector's threshold (default
// DefaultStallThreshold; 0 turns it off) and what it does with a report: fn,
// or, when fn is nil, a warning through the loop's logger naming the loop,
// what blocked it and the loop goroutine's stack. fn runs on the watchdog's
// goroutine while the loop is still blocked, so keep it short and do not
// wait for the loop in it. The loop
// publishes each task, timer and handler callback it runs with two atomic
// stores; a watchdog goroutine samples the loops four times per threshold
// (see watchdog.go), so a piece of work is reported once it has blocked its
// loop for between the threshold and 1.25 times it.
func WithStallDetector(threshold time.Duration, fn func(StallReport)) Option {
	return func(c *config) error {
		if threshold < 0 {
			return fmt.Errorf("engine: stall threshold %v (expected >= 0; 0 turns the detector off)", threshold)
		}
		c.stallThreshold, c.onStall = threshold, fn
		return nil
	}
}

// WithBusyPoll makes the loop poll its driver without blocking for up to d
// after the last completion or task before it goes to sleep (Netty's
// BUSY_WAIT strategy). It trades CPU for latency: a request that arrives
// within the window is picked up without a thread wake-up. Off by default.
func WithBusyPoll(d time.Duration) Option {
	return func(c *config) error {
		if d < 0 {
			return fmt.Errorf("engine: busy poll %v (expected >= 0)", d)
		}
		c.busyPoll = d
		return nil
	}
}

// WithAdaptiveSpin sets the longest a loop polls its driver before it
// sleeps (DefaultSpinLimit; 0 turns the spin off). The loop learns the
// window from its idle gaps and spins only while work comes back sooner than
// the limit, only while spinning measures shorter gaps than sleeping (see
// the package doc: a peer in the same process is often reached faster by
// sleeping), and only while fewer than GOMAXPROCS/2 loops of the process
// spin; so never at GOMAXPROCS=1, and at most once per idle stretch when
// work is sparse. Loops with WithBusyPoll do not spin.
func WithAdaptiveSpin(limit time.Duration) Option {
	return func(c *config) error {
		if limit < 0 {
			return fmt.Errorf("engine: adaptive spin limit %v (expected >= 0)", limit)
		}
		c.spinLimit = limit
		return nil
	}
}

func checkIORatio(r int) error {
	if r <= 0 || r > 100 {
		return fmt.Errorf("engine: ioRatio %d (expected: 0 < ioRatio <= 100)", r)
	}
	return nil
}
