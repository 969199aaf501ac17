package engine

import (
	"fmt"

	"github.com/ringloop/ringloop/internal/taskq"
)

// The handler's callbacks, each behind a recover: a panic ends the
// connection that was being served (closed, unsent bytes dropped, OnClose
// told why with an error wrapping a *tasks.PanicError, which matches
// tasks.ErrPanicked) and nothing else. Without it
// the loop's own recover would keep the loop alive but leave the connection
// half served: never read again, never closed, its fd and slot held.

func (c *Conn) onOpen() {
	defer c.recoverCallback("OnOpen")
	c.h.OnOpen(c)
}

func (c *Conn) onData(b []byte) {
	defer c.recoverCallback("OnData")
	c.h.OnData(c, b)
}

func (c *Conn) onReadClosed(h HalfCloseHandler) {
	defer c.recoverCallback("OnReadClosed")
	h.OnReadClosed(c)
}

func (c *Conn) onWritabilityChanged(w bool) {
	defer c.recoverCallback("OnWritabilityChanged")
	c.wh.OnWritabilityChanged(c, w)
}

func (c *Conn) onIdle(h IdleHandler, k IdleKind) {
	defer c.recoverCallback("OnIdle")
	h.OnIdle(c, k)
}

func (c *Conn) onShutdown(h ShutdownHandler) {
	defer c.recoverCallback("OnShutdown")
	h.OnShutdown(c)
}

// onClose is the last callback: the connection is already released, so a
// panic there is only reported.
func (c *Conn) onClose() {
	defer func() {
		if p := recover(); p != nil {
			c.loop.reportPanic("OnClose", p)
		}
	}()
	c.h.OnClose(c, c.closeReason())
}

// closeReason is the err OnClose and observers receive: nil when the
// connection's own side closed it (Close, CloseWithError(nil)), as closing a
// net.Conn yourself is no error; ErrConnClosed stays the reason inside, for
// the writes it refuses.
func (c *Conn) closeReason() error {
	if c.closeErr == ErrConnClosed {
		return nil
	}
	return c.closeErr
}

// recoverHook is deferred around a user hook that has no connection to end
// (an observer, a chooser, a stall detector, OnUnregistered): a panic is
// reported and the loop goes on.
func (l *Loop) recoverHook(what string) {
	if p := recover(); p != nil {
		l.reportPanic(what, p)
	}
}

// recoverCallback is deferred around a callback: it reports a panic and
// closes the connection with an error wrapping a *tasks.PanicError.
func (c *Conn) recoverCallback(what string) {
	if p := recover(); p != nil {
		c.loop.reportPanic(what, p)
		c.abortWith(fmt.Errorf("engine: %s: %w", what, taskq.NewPanicError(p)))
	}
}
