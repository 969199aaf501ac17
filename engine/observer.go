package engine

import (
	"errors"

	"golang.org/x/sys/unix"
)

// ConnObserver watches the connections a Listen or Dial makes, beside their
// handler. Counting and tracking connections (as package loopgroup does)
// then never wraps the user's handler, so every optional handler interface
// (WritabilityHandler, HalfCloseHandler, IdleHandler and any added later)
// still reaches it.
type ConnObserver interface {
	// ConnOpened runs on the loop just before the handler's OnOpen.
	ConnOpened(c *Conn)
	// ConnClosed runs on the loop just after the handler's OnClose (even one
	// that panicked), once for every connection ConnOpened saw.
	ConnClosed(c *Conn, err error)
}

// refused closes fd, accepted for target but refused by it, and tells the
// workers that care (see WithWorkers): the counterpart of the ConnOpened
// that will never come.
func (c *connConfig) refused(target *Loop, fd int) {
	unix.Close(fd)
	if r, ok := c.workers.(interface{ Refused(target *Loop) }); ok {
		defer target.recoverHook("Loops.Refused")
		r.Refused(target)
	}
}

// WithObserver adds o to the connections of a Listen or Dial; several
// observers are called in the order added.
func WithObserver(o ConnObserver) ConnOption {
	return func(c *connConfig) error {
		if o == nil {
			return errors.New("engine: nil ConnObserver")
		}
		c.observers = append(c.observers, o)
		return nil
	}
}

// Observers are user hooks: a panic in one is reported and the others still
// run.

func (c *Conn) observeOpened() {
	for _, o := range c.cfg.observers {
		c.observeOpenedBy(o)
	}
}

func (c *Conn) observeOpenedBy(o ConnObserver) {
	defer c.loop.recoverHook("ConnObserver.ConnOpened")
	o.ConnOpened(c)
}

func (c *Conn) observeClosed() {
	for _, o := range c.cfg.observers {
		c.observeClosedBy(o)
	}
}

func (c *Conn) observeClosedBy(o ConnObserver) {
	defer c.loop.recoverHook("ConnObserver.ConnClosed")
	o.ConnClosed(c, c.closeReason())
}
