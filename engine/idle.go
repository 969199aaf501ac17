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
type idleTask struct{ c *Conn }

func (t *idleTask) Run() {
	c := t.c
	if c.st != connOpen {
		return
	}
	n := now()
	cfg := c.cfg
	fire := func(kind IdleKind, last int64, d time.Duration) bool {
		if d <= 0 || n-last < int64(d) {
			return false
		}
		if ih, ok := c.h.(IdleHandler); ok {
			ih.OnIdle(c, kind)
			return false
		}
		c.closeWith(ErrIdleTimeout)
		return true
	}
	if fire(ReadIdle, c.lastRead, cfg.readIdle) ||
		fire(WriteIdle, c.lastWr, cfg.writeIdle) ||
		fire(AllIdle, max(c.lastRead, c.lastWr), cfg.allIdle) {
		return
	}
	// An IdleHandler was told: the next period starts now.
	if cfg.readIdle > 0 && n-c.lastRead >= int64(cfg.readIdle) {
		c.lastRead = n
	}
	if cfg.writeIdle > 0 && n-c.lastWr >= int64(cfg.writeIdle) {
		c.lastWr = n
	}
	if cfg.allIdle > 0 && n-max(c.lastRead, c.lastWr) >= int64(cfg.allIdle) {
		c.lastRead = n
	}
	if c.st == connOpen {
		c.armIdle(n)
	}
}

// armIdle arms the idle timer for the earliest timeout still ahead.
func (c *Conn) armIdle(n int64) {
	cfg := c.cfg
	next := int64(-1)
	consider := func(last int64, d time.Duration) {
		if d <= 0 {
			return
		}
		at := last + int64(d)
		if at < n {
			at = n
		}
		if next < 0 || at < next {
			next = at
		}
	}
	consider(c.lastRead, cfg.readIdle)
	consider(c.lastWr, cfg.writeIdle)
	consider(max(c.lastRead, c.lastWr), cfg.allIdle)
	if next >= 0 {
		c.loop.heap.Start(&c.idle, next)
	}
}
