package engine

import (
	"cmp"
	"fmt"
	"log/slog"
	"time"

	"github.com/ringloop/ringloop/internal/driver"
	"github.com/ringloop/ringloop/internal/option"
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
	stallThreshold time.Duration
	onStall        func(StallReport)
	busyPoll       time.Duration                              // busy spin (WithSpin with busy)
	spinLimit      time.Duration                              // adaptive spin (WithSpin)
	threading      Threading                                  // 0: RINGLOOP_THREADING, else defaultThreading
	newDriver      func(driver.Config) (driver.Driver, error) // tests: inject a driver
	testFault      func(at string)                            // tests: called as the engine's own code (see export_test.go)
}

func defaultConfig() config {
	return config{
		backend:        BackendAuto,
		ioRatio:        defaultIORatio,
		reject:         tasks.Reject(),
		logger:         slog.Default(),
		spinLimit:      defaultSpinLimit,
		stallThreshold: defaultStallThreshold,
	}
}

// Defaults taken from Netty.
const (
	// defaultIORatio gives I/O and tasks equal time (WithIORatio).
	defaultIORatio = 50
	// defaultShutdownTimeout is Netty's default timeout of a graceful
	// shutdown: what Shutdown and Close pass to ShutdownGracefully (with no
	// quiet period it never comes into play).
	defaultShutdownTimeout = 15 * time.Second
)

// WithBackend picks the I/O backend; the default is BackendAuto, which the
// RINGLOOP_BACKEND environment variable can override.
func WithBackend(b Backend) Option {
	return func(c *config) error { c.backend = b; return nil }
}

// WithDriverConfig sets the kernel profile the driver behaves as on and its
// ring and buffer sizes (see DriverConfig); a zero field keeps its value.
func WithDriverConfig(dc DriverConfig) Option {
	return func(c *config) error {
		if err := dc.check(); err != nil {
			return err
		}
		if dc.Profile != "" {
			p, err := driver.ParseProfile(dc.Profile)
			if err != nil {
				return err
			}
			c.drv.Profile = p
		}
		c.drv.Entries = cmp.Or(dc.Entries, c.drv.Entries)
		c.drv.CQEntries = cmp.Or(dc.CQEntries, c.drv.CQEntries)
		c.drv.BufferSize = cmp.Or(dc.BufferSize, c.drv.BufferSize)
		c.drv.BufferCount = cmp.Or(dc.BufferCount, c.drv.BufferCount)
		return nil
	}
}

// WithIORatio sets the share of time given to I/O, 1..100 (default 50,
// Netty's: equal time for I/O and tasks); 100 runs tasks without a time
// limit.
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
// least 16; the default is unbounded, as Netty's), and reject decides what
// Execute does when it is full: nil is tasks.Reject (fail with
// tasks.ErrRejected), tasks.Backoff retries. 0 makes the ring unbounded
// again.
func WithMaxPendingTasks(n int, reject tasks.RejectPolicy) Option {
	return option.NonNegative("engine: max pending tasks", n, "; 0 = unbounded", func(c *config) {
		c.maxPending, c.reject = n, cmp.Or(reject, tasks.Reject())
	})
}

// WithLogger sets where the loop reports panics, stalls and fallbacks.
func WithLogger(l *slog.Logger) Option {
	return option.Required(l, "engine: nil logger", func(c *config) { c.logger = l })
}

// WithName names the loop in logs and metrics. Without it a loop is named
// "loop-<n>", n counting the loops the process built (from 0), so a service
// that builds its loops in the same order names them the same at every
// start; a loopgroup names its loops "<group>-<index>".
func WithName(name string) Option {
	return option.Required(name, "engine: empty loop name", func(c *config) { c.name = name })
}

// WithStallDetector sets the stall detector's threshold (default 250 ms:
// above what a healthy loop does, below what users do wrong on a loop, see
// stall.go; 0 turns it off) and what it does with a report: fn,
// or, when fn is nil, a warning through the loop's logger naming the loop,
// what blocked it and the loop goroutine's stack. fn runs on the watchdog's
// goroutine while the loop is still blocked, so keep it short and do not
// wait for the loop in it. The loop
// publishes each task, timer and handler callback it runs with two atomic
// stores; a watchdog goroutine samples the loops four times per threshold
// (see watchdog.go), so a piece of work is reported once it has blocked its
// loop for between the threshold and 1.25 times it. While every loop is
// idle the watchdog sleeps until one starts work again.
func WithStallDetector(threshold time.Duration, fn func(StallReport)) Option {
	return option.NonNegative("engine: stall threshold", threshold, "; 0 turns the detector off", func(c *config) {
		c.stallThreshold, c.onStall = threshold, fn
	})
}

// WithSpin sets the longest a loop polls its driver after its work before
// it sleeps (default 50 µs; 0 sleeps at once), and how. By default the
// spin adapts: the loop learns the window from its idle gaps and spins
// only while work comes back sooner than the limit, only while spinning
// measures shorter gaps than sleeping (see the package doc: a peer in the
// same process is often reached faster by sleeping), and only while fewer
// than GOMAXPROCS/2 loops of the process spin; so never at GOMAXPROCS=1,
// and at most once per idle stretch when work is sparse. With busy the loop
// polls for the whole window after every piece of work, whatever it
// measures and even at GOMAXPROCS=1 (Netty's BUSY_WAIT): a core traded for
// latency, a request arriving within the window picked up without a
// wake-up.
func WithSpin(limit time.Duration, busy bool) Option {
	return option.NonNegative("engine: spin limit", limit, "", func(c *config) {
		c.spinLimit, c.busyPoll = limit, 0
		if busy {
			c.spinLimit, c.busyPoll = 0, limit
		}
	})
}

func checkIORatio(r int) error {
	if r <= 0 || r > 100 {
		return fmt.Errorf("engine: ioRatio %d (expected: 0 < ioRatio <= 100)", r)
	}
	return nil
}
