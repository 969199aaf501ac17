package engine

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/ringloop/ringloop/tasks"
)

// ErrWriteBufferFull is AsyncWrite's answer when the bytes the connection
// holds (queued by AsyncWrite and not yet sent) would pass its async write
// limit (BufferLimits.AsyncWrite); nothing of the call was accepted. It wraps
// tasks.ErrRejected.
var ErrWriteBufferFull = fmt.Errorf("engine: connection write buffer full: %w", tasks.ErrRejected)

// asyncWriter is the part of a connection other goroutines write to.
//
// AsyncWrite appends under mu and queues one drain per batch on the loop's
// control ring, which is unbounded but holds at most one drain per
// connection. The loop moves the bytes into the connection's outbound
// buffer; a close first takes whatever AsyncWrite accepted before it, so
// accepted bytes are sent before the FIN (or their loss is reported to
// OnClose by the abort that dropped them), and refuses the rest.
type asyncWriter struct {
	asyncQueue
	drain   asyncDrain
	loopBuf atomic.Int64 // the loop's Buffered(), published each flush
	held    bool         // HoldAsync: drains leave buf where it is (loop only)
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
	a.mu.Lock()
	if a.err != nil {
		err := a.err
		a.mu.Unlock()
		return err
	}
	if len(p) == 0 {
		a.mu.Unlock()
		return nil
	}
	if int64(len(a.buf)+len(p))+a.loopBuf.Load() > int64(c.cfg.asyncLimit) {
		a.mu.Unlock()
		return ErrWriteBufferFull
	}
	a.buf = append(a.buf, p...)
	return a.queue(c.loop, &a.drain)
}

// asyncQueue is what other goroutines append to, for a connection's
// AsyncWrite and a datagram socket's off-loop sends: bytes under mu, and
// one drain per batch queued on the loop's control ring, which is
// unbounded but so holds at most one drain per queue.
type asyncQueue struct {
	mu     sync.Mutex
	buf    []byte // accepted, not yet moved to the outbound side
	spare  []byte // the previous buf, reused by the next batch
	cost   int    // what buf counts against the limit where not len(buf)
	queued bool   // a drain is queued on the loop
	err    error  // non-nil once closing: what writes return
}

// queue ends an append: it is called with mu held, releases it, and asks l
// to run drain for the first append of a batch. Only a loop past its
// shutdown refuses, and by then its close has taken the bytes (err is set)
// or will drop them, reporting it; if none took them, nobody will send
// them: queue drops them and returns the refusal.
func (q *asyncQueue) queue(l *Loop, drain tasks.Task) error {
	first := !q.queued
	q.queued = true
	q.mu.Unlock()
	if !first {
		return nil
	}
	err := l.control(drain)
	if err == nil {
		return nil
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.err != nil {
		return nil
	}
	q.buf, q.cost, q.queued = q.buf[:0], 0, false
	return err
}

// asyncDrain moves a connection's async bytes into its outbound buffer (on
// the loop).
type asyncDrain struct{ c *Conn }

func (d *asyncDrain) Run() {
	c := d.c
	if c.async.held {
		return // queued stays set: releaseAsync drains
	}
	b := c.async.take(nil)
	if len(b) == 0 {
		return
	}
	_, _ = c.write(b) // a close takes the bytes first, so this cannot fail
	c.async.recycle(b)
	c.publishBuffered()
}

// take returns the accepted bytes and, when closeErr is non-nil, makes
// AsyncWrite refuse from now on with it.
func (a *asyncWriter) take(closeErr error) []byte {
	a.mu.Lock()
	defer a.mu.Unlock()
	if closeErr != nil && a.err == nil {
		a.err = closeErr
	}
	b := a.buf
	a.buf, a.spare, a.queued = a.spare[:0], nil, false
	return b
}

// recycle keeps b for the next batch unless it grew past maxIdleBuffer.
func (a *asyncWriter) recycle(b []byte) {
	if cap(b) > maxIdleBuffer {
		return
	}
	a.mu.Lock()
	if a.spare == nil {
		a.spare = b[:0]
	}
	a.mu.Unlock()
}

// publishBuffered lets AsyncWrite see how much the loop holds (on the loop).
func (c *Conn) publishBuffered() { c.async.loopBuf.Store(int64(c.buffered())) }

// closeAsync takes the bytes AsyncWrite accepted before a close and refuses
// later ones with err; keep says whether they are still sent (a graceful
// close) or dropped (an abort, whose error OnClose reports).
func (c *Conn) closeAsync(err error, keep bool) {
	b := c.async.take(err)
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
	b := c.async.take(nil)
	n := len(b)
	c.async.recycle(b)
	return n
}
