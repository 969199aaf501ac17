package engine

import "sync/atomic"

// Requests from other goroutines, collected in connCtl.bits.
const (
	reqClose uint32 = 1 << iota
	reqAbort
	reqCloseWrite
	reqPause
	reqResume
	reqQueued // the connCtl task is on the control ring
)

// connCtl carries a connection's requests from other goroutines to its loop:
// one pre-built task, on the control ring at most once at a time, and a word
// of request bits, so that any number of calls costs no allocation and at
// most one ring entry.
type connCtl struct {
	c    *Conn
	bits atomic.Uint32
	err  atomic.Pointer[error] // CloseWithError's, for reqClose
}

// ask carries out request r at once on the loop; from another goroutine
// it hands r to the loop (request).
func (c *Conn) ask(r uint32) error {
	if c.loop.InEventLoop() {
		c.ctl.apply(r)
		return nil
	}
	return c.ctl.request(r)
}

// request records r and queues the task unless it is queued already.
func (t *connCtl) request(r uint32) error {
	for {
		old := t.bits.Load()
		nw := old | r | reqQueued
		switch {
		case r == reqPause: // the latest of pause and resume wins
			nw &^= reqResume
		case r == reqResume:
			nw &^= reqPause
		case r == reqClose && old&reqAbort != 0,
			r == reqCloseWrite && old&(reqAbort|reqClose) != 0:
			nw = old | reqQueued // after an abort or close it would be a no-op
		}
		if !t.bits.CompareAndSwap(old, nw) {
			continue
		}
		if old&reqQueued != 0 {
			return nil
		}
		// Refused only once the loop has shut down: its shutdown closes
		// the connection.
		return t.c.loop.control(t)
	}
}

// Run applies the requests on the loop.
func (t *connCtl) Run() { t.apply(t.bits.Swap(0)) }

// apply carries out the requests r on the loop.
func (t *connCtl) apply(r uint32) {
	c := t.c
	switch {
	case r&reqResume != 0:
		c.resumeRead()
	case r&reqPause != 0:
		c.pauseRead()
	}
	// In the order they can have been asked (request drops those that
	// would follow an abort or a close): a close then an abort ends a
	// flush that is under way, as two separate calls on the loop would.
	if r&reqCloseWrite != 0 {
		c.closeWrite()
	}
	if r&reqClose != 0 {
		err := ErrConnClosed
		if p := t.err.Load(); p != nil {
			err = *p
		}
		c.closeWith(err)
	}
	if r&reqAbort != 0 {
		c.abortWith(ErrAborted)
	}
}
