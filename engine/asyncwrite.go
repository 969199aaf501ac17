package engine

import (
	"fmt"
	"sync/atomic"

	"github.com/ringloop/ringloop/internal/asyncq"
	"github.com/ringloop/ringloop/tasks"
)

// ErrWriteBufferFull is AsyncWrite's answer when the bytes the connection
// holds (queued by AsyncWrite and not yet sent) would pass its async write
// limit (BufferLimits.AsyncWrite); nothing of the call was accepted. It wraps
// tasks.ErrRejected.
var ErrWriteBufferFull = fmt.Errorf("engine: connection write buffer full: %w", tasks.ErrRejected)

// asyncWriter is the part of a connection other goroutines write to.
//
// AsyncWrite appends under Mu (internal/asyncq's queue, which package
// packet's sockets share) and queues one drain per batch on the loop's
// control ring, which is unbounded but holds at most one drain per
// connection. The loop moves the bytes into the connection's outbound
// buffer; a close first takes whatever AsyncWrite accepted before it, so
// accepted bytes are sent before the FIN (or their loss is reported to
// OnClose by the abort that dropped them), and refuses the rest.
type asyncWriter struct {
	asyncq.Queue
	drain   asyncDrain
	loopBuf atomic.Int64 // the loop's Buffered(), published each flush
	held    bool         // HoldAsync: drains leave Buf where it is (loop only)
	release func()       // HoldAsync's release, made once
}

// AsyncWrite copies p and writes it on the loop; safe from any goroutine.
// Writes from one goroutine keep their order, and every byte it accepted
// (returned nil) is sent before a later Close closes the connection. It
// returns ErrConnClosed (or ErrWriteClosed after CloseWrite) once the
// connection is closing, and ErrWriteBufferFull, accepting nothing, when
// the bytes waiting to be sent would pass the connection's async write limit:
// the off-loop producer's signal to slow down (see also Writable).
func (c *Conn) AsyncWrite(p []byte) error {
	a := &c.async
	a.Mu.Lock()
	if a.Err != nil {
		err := a.Err
		a.Mu.Unlock()
		return err
	}
	if len(p) == 0 {
		a.Mu.Unlock()
		return nil
	}
	if int64(len(a.Buf)+len(p))+a.loopBuf.Load() > int64(c.cfg.asyncLimit) {
		a.Mu.Unlock()
		return ErrWriteBufferFull
	}
	a.Buf = append(a.Buf, p...)
	return a.Queue.Queue(c.loop, &a.drain)
}

// asyncDrain moves a connection's async bytes into its outbound buffer (on
// the loop).
type asyncDrain struct{ c *Conn }

func (d *asyncDrain) Run() {
	c := d.c
	if c.async.held {
		return // queued stays set: releaseAsync drains
	}
	b := c.async.Take(nil)
	if len(b) == 0 {
		return
	}
	_, _ = c.write(b) // a close takes the bytes first, so this cannot fail
	c.async.Recycle(b)
	c.publishBuffered()
}

// publishBuffered lets AsyncWrite see how much the loop holds (on the loop).
func (c *Conn) publishBuffered() { c.async.loopBuf.Store(int64(c.buffered())) }

// closeAsync takes the bytes AsyncWrite accepted before a close and refuses
// later ones with err; keep says whether they are still sent (a graceful
// close) or dropped (an abort, whose error OnClose reports).
func (c *Conn) closeAsync(err error, keep bool) {
	b := c.async.Take(err)
	if keep && len(b) > 0 && c.st == connOpen && !c.has(flagHalfShut) {
		c.queue(b)
		c.queueFlush()
	}
}

// HoldAsync keeps the bytes AsyncWrite accepts out of the connection's
// output until release is called, for a protocol whose loop-side writes
// must not be interleaved with other goroutines' for a while (a WebSocket
// message sent in fragments). Held bytes still count against the async
// write limit, so AsyncWrite refuses past it as usual; a close sends them
// (or an abort drops them) as any accepted bytes. release writes the held
// bytes, behind what the loop wrote meanwhile; it must be called on the
// loop too, and once. Loop only: elsewhere HoldAsync returns an error.
func (c *Conn) HoldAsync() (release func(), err error) {
	if !c.loop.InEventLoop() {
		return nil, errOffLoop("HoldAsync")
	}
	c.async.held = true
	if c.async.release == nil {
		c.async.release = c.releaseAsync // one closure per connection, not per hold
	}
	return c.async.release, nil
}

// releaseAsync ends HoldAsync.
func (c *Conn) releaseAsync() {
	if !c.loop.InEventLoop() || !c.async.held {
		return
	}
	c.async.held = false
	c.async.drain.Run()
}

// DiscardAsync drops the bytes AsyncWrite accepted that the loop has not
// yet written (those HoldAsync holds) and returns how many there were: for
// a protocol that must close before it could send them (a close frame
// cannot follow an unfinished message's data). Loop only: elsewhere it
// returns 0.
func (c *Conn) DiscardAsync() int {
	if !c.loop.InEventLoop() {
		return 0
	}
	b := c.async.Take(nil)
	n := len(b)
	c.async.Recycle(b)
	return n
}
