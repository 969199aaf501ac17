package engine

import (
	"io"

	"golang.org/x/sys/unix"

	"github.com/ringloop/ringloop/internal/driver"
)

// The read side: the receive op, the peer's end of stream, and pausing.

// armRecv arms the receive op unless it is armed or the peer has ended.
func (c *Conn) armRecv() {
	if c.has(flagRecvArmed | flagReadEOF | flagInputEnd) {
		return
	}
	c.set(flagRecvArmed)
	c.loop.drv.Recv(c.fd, c.tag(driver.OpRecv))
}

func (c *Conn) onRecv(comp *driver.Completion) {
	if !comp.More {
		c.clear(flagRecvArmed)
	}
	switch {
	case comp.Res > 0:
		if c.st == connOpen || c.st == connClosing && c.closeErr == io.EOF {
			if c.cfg.idle() {
				c.lastRead = now()
			}
			if c.tr == nil {
				c.deliver(comp.Data)
			} else {
				c.decode(comp.Data)
			}
		}
		if !comp.More && c.st == connOpen && !c.has(flagReadPaused) {
			c.armRecv()
		}
	case comp.Res == 0:
		if c.tr == nil {
			c.peerEOF()
		} else {
			c.set(flagInputEnd) // the transport judges the end
			c.decode(nil)
		}
	case comp.Res == -int32(unix.ECANCELED):
		if c.st == connOpen && !c.has(flagReadPaused) {
			c.armRecv() // ResumeRead came before the cancel landed
		}
	default:
		c.abortWith(comp.Err())
	}
	c.maybeRelease()
}

// peerEOF handles the peer's FIN: a HalfCloseHandler is told and the
// connection stays open for writing; otherwise it closes.
func (c *Conn) peerEOF() {
	if hh, ok := c.h.(HalfCloseHandler); ok && c.st == connOpen {
		c.set(flagReadEOF)
		c.onReadClosed(hh)
		if c.has(flagWrShut) && c.st == connOpen {
			c.closeWith(c.eofErr()) // both directions are done
		}
	} else {
		c.closeWith(c.eofErr())
	}
}

// Reading reports whether the connection is open, not paused (PauseRead)
// and still this handler's (not given away by SetHandler in this OnData): a
// handler that splits frames stops where it turns false and keeps the rest,
// which ResumeRead delivers again. Loop only: off the loop
// it reports false.
func (c *Conn) Reading() bool {
	return c.loop.InEventLoop() && c.st == connOpen && !c.has(flagReadPaused|flagHandedOver|flagHeld)
}

// PauseRead stops reading (Netty's autoRead off) so a fast peer cannot grow
// memory; bytes already received still arrive. Off the loop it hands itself
// to the loop, where the latest of PauseRead and ResumeRead called off the
// loop wins.
func (c *Conn) PauseRead() { _ = c.ask(reqPause) } // refused: the loop shut down, closing c

func (c *Conn) pauseRead() {
	if c.has(flagReadPaused) {
		return
	}
	c.set(flagReadPaused)
	if c.has(flagRecvArmed) {
		c.loop.drv.Cancel(c.fd, c.tag(driver.OpRecv))
	}
}

// ResumeRead starts reading again. Off the loop it hands itself to the loop,
// as PauseRead.
func (c *Conn) ResumeRead() { _ = c.ask(reqResume) } // refused: the loop shut down, closing c

func (c *Conn) resumeRead() {
	if !c.has(flagReadPaused) {
		return
	}
	c.clear(flagReadPaused)
	if c.st == connOpen && !c.has(flagRecvArmed) {
		c.armRecv()
	}
	c.queueRedeliver()
}
