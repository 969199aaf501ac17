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

// HandoffObserver is an optional interface of a ConnObserver on a listener
// with a chooser (WithWorkers). HandoffRefused runs when a connection the
// chooser assigned to target is closed before it opened, because target
// refused it (it was shutting down): the counterpart of the ConnOpened that
// will never come, so an observer counting from the choice can undo it. It
// runs on the accepting loop or on target.
type HandoffObserver interface {
	HandoffRefused(target *Loop)
}

// refused closes fd, accepted for target but refused by it, and tells the
// observers that care.
func (c *connConfig) refused(target *Loop, fd int) {
	unix.Close(fd)
	for _, o := range c.observers {
		if h, ok := o.(HandoffObserver); ok {
			handoffRefused(h, target)
		}
	}
}

func handoffRefused(h HandoffObserver, target *Loop) {
	defer target.recoverHook("HandoffObserver.HandoffRefused")
	h.HandoffRefused(target)
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
	o.ConnClosed(c, c.closeErr)
}
