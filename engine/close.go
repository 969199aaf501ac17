package engine

import (
	"errors"
	"io"

	"golang.org/x/sys/unix"

	"github.com/ringloop/ringloop/internal/driver"
)

// Closing: a graceful close flushes, then closes the fd; an abort drops what
// is unsent; the slot is released, and OnClose called, once every op armed
// has reported its end.

// afterDrain runs when nothing is left to send: a pending half-close or close
// happens now. A half-closed connection whose peer has also shut down its
// side is closed: both directions are done.
func (c *Conn) afterDrain() {
	if c.has(flagHalfShut) && !c.has(flagWrShut) && c.st == connOpen {
		c.set(flagWrShut)
		_ = unix.Shutdown(c.fd, unix.SHUT_WR)
		if c.has(flagReadEOF) {
			c.closeWith(io.EOF)
			return
		}
	}
	if c.st == connClosing {
		c.finish()
	}
}

// Close flushes what was written and then closes the connection; OnClose
// follows with a nil error. Off the loop it hands itself to the loop's
// control ring and returns at once; it returns ErrShutdown only once the
// loop has shut down, which closed the connection itself.
func (c *Conn) Close() error {
	if c.loop.InEventLoop() {
		c.closeWith(ErrConnClosed)
		return nil
	}
	return c.ctl.request(reqClose)
}

// CloseWithError closes the connection as Close does, and OnClose receives
// err (nil when err is nil): a protocol handler ending a peer that
// sent something it cannot accept says why, as io.PipeWriter's
// CloseWithError does. Off the loop it hands itself to the loop, as Close;
// the first error asked wins.
func (c *Conn) CloseWithError(err error) error {
	if err == nil {
		err = ErrConnClosed
	}
	if c.loop.InEventLoop() {
		c.closeWith(err)
		return nil
	}
	c.ctl.err.CompareAndSwap(nil, &err)
	return c.ctl.request(reqClose)
}

// Abort closes the connection now, dropping unsent bytes, and resets it (the
// peer sees ECONNRESET). Off the loop it hands itself to the loop, as Close.
func (c *Conn) Abort() error { return c.ask(reqAbort) }

// CloseWrite half-closes: once the written bytes are sent the peer reads EOF;
// reading goes on. Once the peer has shut down its side too (a
// HalfCloseHandler's OnReadClosed), the connection is closed and OnClose
// follows with io.EOF. Off the loop it hands itself to the loop, as Close.
func (c *Conn) CloseWrite() error { return c.ask(reqCloseWrite) }

func (c *Conn) closeWrite() {
	if c.st != connOpen || c.has(flagHalfShut) {
		return
	}
	c.closeAsync(ErrWriteClosed, true)
	if c.tr != nil {
		c.closeTransport() // close_notify goes before the FIN
	}
	c.set(flagHalfShut)
	if !c.has(flagInFlight) && len(c.out) == 0 {
		c.afterDrain()
	}
}

// closeWith starts a graceful close: stop reading, flush, then close.
func (c *Conn) closeWith(err error) {
	if c.st >= connClosing {
		return
	}
	if c.st == connConnecting {
		c.abortWith(err)
		return
	}
	c.closeAsync(ErrConnClosed, true)
	c.st = connClosing
	c.closeErr = err
	if c.tr != nil {
		c.closeTransport()
	}
	if c.has(flagRecvArmed) {
		c.loop.drv.Cancel(c.fd, c.tag(driver.OpRecv))
	}
	if !c.has(flagInFlight) && len(c.out) == 0 {
		c.finish()
		return
	}
	// The close timeout bounds the flush (a peer that never reads); the
	// idle timer is free, idle timeouts do not apply to a closing
	// connection.
	c.loop.heap.Start(&c.idle, now()+int64(c.cfg.closeTimeout))
}

// abortWith closes at once, dropping unsent bytes; err replaces the reason
// of a graceful close under way, since what it would have flushed is lost.
func (c *Conn) abortWith(err error) {
	if c.st == connClosed {
		return
	}
	c.closeAsync(ErrConnClosed, false)
	c.closeErr = err
	if errors.Is(err, ErrAborted) {
		_ = unix.SetsockoptLinger(c.fd, unix.SOL_SOCKET, unix.SO_LINGER, &unix.Linger{Onoff: 1, Linger: 0})
	}
	c.out, c.plain = c.out[:0], c.plain[:0]
	c.finish()
}

// finish cancels what is armed and closes the fd through the driver; the
// connection is released once every op has reported its end.
func (c *Conn) finish() {
	if c.st == connClosed {
		return
	}
	c.st = connClosed
	c.closeAsync(ErrConnClosed, false)
	c.loop.heap.Stop(&c.idle)
	if c.has(flagRecvArmed) {
		c.loop.drv.Cancel(c.fd, c.tag(driver.OpRecv))
	}
	if c.has(flagInFlight) {
		c.loop.drv.Cancel(c.fd, c.tag(driver.OpSend))
	}
	if c.has(flagConnArmed) {
		c.loop.drv.Cancel(c.fd, c.tag(driver.OpConnect))
	}
	c.loop.drv.CloseFD(c.fd, c.tag(driver.OpClose))
}

// maybeRelease frees the slot and calls OnClose once everything has ended.
func (c *Conn) maybeRelease() {
	if c.st != connClosed || !c.has(flagCloseDone) || c.has(flagRecvArmed) || c.has(flagInFlight) || c.has(flagConnArmed) {
		return
	}
	c.loop.reg.remove(c.idx, c.gen)
	c.unlistTrim()
	c.loop.bufs.put(c.out)
	c.loop.bufs.put(c.sending)
	c.loop.bufs.put(c.plain)
	c.out, c.sending, c.plain = nil, nil, nil
	c.publishBuffered()
	if c.tr != nil {
		c.tr.Close(c.closeErr)
	}
	if d := c.dialer; d != nil {
		c.dialer = nil
		d.ended(c.closeErr)
		return
	}
	defer c.observeClosed()
	if !c.has(flagHeld) { // a handler whose OnOpen a transport held back never opened
		c.onClose()
	}
	c.releaseIn()
}

// shutdown closes the connection as its loop stops: gracefully, after a
// ShutdownHandler's OnShutdown, or at once with the cause when the loop's
// own code panicked (its state is not to be trusted with a flush).
func (c *Conn) shutdown() {
	if err := c.loop.fault; err != nil {
		c.abortWith(err)
		return
	}
	if sh, ok := c.h.(ShutdownHandler); ok && c.st == connOpen && !c.has(flagHeld) {
		c.onShutdown(sh)
	}
	c.closeWith(ErrShutdown)
}

func (c *Conn) abandon() {
	if c.st != connClosed {
		_ = unix.Close(c.fd) // never handed to CloseFD; one issued is not repeated
	}
	if c.closeErr == nil {
		c.closeErr = c.loop.closeCause()
	}
	c.st = connClosed
	c.set(flagCloseDone)
	c.clear(flagRecvArmed | flagInFlight | flagConnArmed)
	c.maybeRelease()
}
