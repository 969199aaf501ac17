package engine

import (
	"errors"
	"time"
)

// IdleKind says which idle timeout fired (Netty's IdleState).
type IdleKind uint8

const (
	// ReadIdle: nothing was read for the read timeout.
	ReadIdle IdleKind = iota + 1
	// WriteIdle: nothing was written for the write timeout.
	WriteIdle
	// AllIdle: nothing was read or written for the idle timeout.
	AllIdle
)

// String names the idle kind.
func (k IdleKind) String() string {
	switch k {
	case ReadIdle:
		return "read idle"
	case WriteIdle:
		return "write idle"
	case AllIdle:
		return "all idle"
	}
	return "idle?"
}

// IdleHandler is an optional Handler extension (Netty's IdleStateHandler
// events). Without it, an idle timeout closes the connection with
// ErrIdleTimeout. With it, the handler decides; the timeout re-arms for
// another full period.
type IdleHandler interface {
	OnIdle(c *Conn, kind IdleKind)
}

// ErrIdleTimeout closes a connection whose idle timeout fired and whose
// handler does not implement IdleHandler.
var ErrIdleTimeout = errors.New("engine: idle timeout")

// idleTask runs when a connection's single idle timer fires. Reads and writes
// only record their time (one clock read); the timer is re-armed here, for the
// earliest of the three timeouts, so traffic never touches the timer heap.
// A timeout's period starts at the later of the last matching activity and
// its last firing, so an IdleHandler is told once per idle period.
type idleTask struct{ c *Conn }

func (t *idleTask) Run() {
	c := t.c
	if c.st == connClosing { // the close timeout (closeWith)
		c.abortWith(ErrCloseTimeout)
		return
	}
	if c.st != connOpen {
		return
	}
	n := now()
	for _, k := range [...]IdleKind{ReadIdle, WriteIdle, AllIdle} {
		at, ok := c.idleDeadline(k)
		if !ok || n < at {
			continue
		}
		ih, handled := c.h.(IdleHandler)
		if !handled || c.has(flagHeld) { // a handler not yet opened is not asked
			c.closeWith(ErrIdleTimeout)
			return
		}
		c.idleFired[k-1] = n
		c.onIdle(ih, k)
		if c.st != connOpen {
			return
		}
	}
	c.armIdle(n)
}

// idleDeadline is when timeout k next fires, if it is on.
func (c *Conn) idleDeadline(k IdleKind) (int64, bool) {
	var d time.Duration
	var last int64
	switch k {
	case ReadIdle:
		d, last = c.cfg.readIdle, c.lastRead
	case WriteIdle:
		d, last = c.cfg.writeIdle, c.lastWr
	default:
		d, last = c.cfg.allIdle, max(c.lastRead, c.lastWr)
	}
	if d <= 0 {
		return 0, false
	}
	return max(last, c.idleFired[k-1]) + int64(d), true
}

// armIdle arms the idle timer for the earliest timeout still ahead.
func (c *Conn) armIdle(n int64) {
	next, any := int64(0), false
	for _, k := range [...]IdleKind{ReadIdle, WriteIdle, AllIdle} {
		if at, ok := c.idleDeadline(k); ok && (!any || at < next) {
			next, any = at, true
		}
	}
	if any {
		c.loop.heap.Start(&c.idle, max(next, n))
	}
}
