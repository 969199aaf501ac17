package engine

import (
	"sync/atomic"
	"time"

	"github.com/ringloop/ringloop/internal/driver"
	"github.com/ringloop/ringloop/internal/timers"
)

// WithDriverWrapper (tests only) builds the driver the other options choose,
// then wraps it: tests inject faults into a real driver of either backend.
func WithDriverWrapper(wrap func(driver.Driver) driver.Driver) Option {
	return func(c *config) error {
		c.newDriver = func(dc driver.Config) (driver.Driver, error) {
			inner := *c
			inner.newDriver, inner.drv = nil, dc
			d, _, err := openDriver(&inner)
			if err != nil {
				return nil, err
			}
			return wrap(d), nil
		}
		return nil
	}
}

// SetLoopErrorBackoff (tests only) changes the driver-failure back-off and
// returns a function that restores it.
func SetLoopErrorBackoff(least, most time.Duration) (restore func()) {
	old := loopErrorBackoff
	loopErrorBackoff.least, loopErrorBackoff.most = least, most
	return func() { loopErrorBackoff = old }
}

// UseFakeClock (tests only) makes the engine's clock read the returned
// counter, which starts at the real clock's reading and moves only when the
// test adds to it; restore puts the real clock back.
func UseFakeClock() (clock *atomic.Int64, restore func()) {
	c := new(atomic.Int64)
	c.Store(timers.Now())
	read := func() int64 { return c.Load() }
	testClock.Store(&read)
	return c, func() { testClock.Store(nil) }
}

// TaskBatch (tests only) is how many tasks run between clock reads.
const TaskBatch = taskBatch

// MaxIdleBuffer (tests only) is the most a connection keeps of each send
// buffer between bursts.
const MaxIdleBuffer = maxIdleBuffer

// SendBufferCaps (tests only, on the loop) returns the capacities of the
// buffers a connection keeps for sending: the outbound buffer, the one
// handed to the driver, and AsyncWrite's current and spare batches.
func (c *Conn) SendBufferCaps() (out, sending, asyncBuf, asyncSpare int) {
	c.async.Mu.Lock()
	defer c.async.Mu.Unlock()
	return cap(c.out), cap(c.sending), cap(c.async.Buf), cap(c.async.Spare)
}

// UseFakeTimers (tests only, before l starts) makes l's timers read clock
// (from UseFakeClock) too, so that deadlines and the loop's waits count the
// same fake time and a timer falls due only when the test moves the clock.
func (l *Loop) UseFakeTimers(clock *atomic.Int64) { l.heap.SetClock(clock.Load) }

// WithFaultHook (tests only) calls fn as the engine's own code: at "completion"
// before each completion is routed, at "iteration" at the start of each
// loop iteration (outside the driver's Wait), and at "engine task" before
// each of the engine's own tasks runs. A panic in fn is a panic of the
// engine, not of a handler.
func WithFaultHook(fn func(at string)) Option {
	return func(c *config) error { c.testFault = fn; return nil }
}

// SetTrimPeriod (tests only, before l starts) sets how long a connection
// writes nothing before the sweep releases its send buffers.
func (l *Loop) SetTrimPeriod(d time.Duration) { l.trim.period = d }

// TrimListed (tests only, on the loop) is how many connections the
// send-buffer sweep lists.
func (l *Loop) TrimListed() int { return len(l.trim.conns) }

// TrimSweep (tests only, on the loop) runs the send-buffer sweep now.
func (l *Loop) TrimSweep() { l.trim.task.Run() }

// WatchdogDozing reports whether the stall watchdog waits for a loop to
// start a piece of work instead of ticking.
func WatchdogDozing() bool { return watchdog.dozing.Load() }

// ReleaseSendBuffers is what Wire.Open does to a connection's outbound
// buffers (releaseWhenSent), for a plain connection's test.
func (c *Conn) ReleaseSendBuffers() error {
	if !c.loop.InEventLoop() {
		return errOffLoop("ReleaseSendBuffers")
	}
	c.releaseWhenSent()
	return nil
}
