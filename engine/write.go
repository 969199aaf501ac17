package engine

import (
	"golang.org/x/sys/unix"

	"github.com/ringloop/ringloop/internal/driver"
)

// The write path: bytes a handler writes wait in the outbound buffer until
// the end of the loop's iteration, when one send per connection carries
// them; the send's completion hands on what piled up meanwhile.

// Write queues p to be sent. On the loop the bytes are copied into the
// connection's outbound buffer and flushed once per loop iteration, so one
// submission carries every send of the iteration; it never blocks: past the
// high watermark it still accepts, and reports the connection unwritable.
//
// Off the loop Write is AsyncWrite: it copies p, the loop sends it in the
// order of the goroutine's writes, and it returns (0, err) with
// ErrWriteBufferFull past the async write limit, ErrConnClosed or
// ErrWriteClosed, accepting nothing.
//
// The connection keeps its send buffers while it writes, so steady traffic
// allocates nothing; once it has written nothing for about a second it
// gives them back (sendtrim.go).
func (c *Conn) Write(p []byte) (int, error) {
	if !c.loop.InEventLoop() {
		if err := c.AsyncWrite(p); err != nil {
			return 0, err
		}
		return len(p), nil
	}
	return c.write(p)
}

// write is Write on the loop.
func (c *Conn) write(p []byte) (int, error) {
	if c.st >= connClosing || c.has(flagHalfShut) {
		if c.has(flagHalfShut) && c.st < connClosing {
			return 0, ErrWriteClosed
		}
		return 0, ErrConnClosed
	}
	if len(p) == 0 {
		return 0, nil
	}
	if need := len(c.out) + len(p); need > cap(c.out) && need >= minCached {
		c.growOut(need)
	}
	c.out = append(c.out, p...)
	c.noteWrite()
	if c.cfg.idle() {
		c.lastWr = now()
	}
	c.queueFlush()
	if c.writable.Load() && c.buffered() > c.cfg.highWater {
		c.setWritable(false)
	}
	return len(p), nil
}

// growOut moves the outbound buffer into one with room for need bytes, from
// the loop's cache (bufcache.go) if it has one.
func (c *Conn) growOut(need int) {
	nb := append(c.loop.bufs.get(need), c.out...)
	c.loop.bufs.put(c.out)
	c.out = nb
}

// queueFlush puts the connection on the loop's flush list.
func (c *Conn) queueFlush() {
	if !c.has(flagQueued) {
		c.set(flagQueued)
		c.loop.flushList = append(c.loop.flushList, c)
	}
}

// ReleaseSendBuffers lets the connection's outbound buffers go once what
// was written has been sent (at once if nothing is pending), instead of
// keeping them for the next writes: a protocol whose setup wrote a larger
// burst than what follows (a TLS handshake's flight) calls it so that an
// idle connection does not hold that burst's buffer. The next write
// allocates one of its own size. Loop only: elsewhere it does nothing.
func (c *Conn) ReleaseSendBuffers() {
	if !c.loop.InEventLoop() {
		return
	}
	if c.has(flagInFlight) || len(c.out) > 0 {
		c.set(flagDropBufs)
		return
	}
	c.releaseSendBuffers()
}

// Buffered returns the bytes written and not yet sent. Off the loop it is
// the count the loop last published (after each flush and send), without
// the bytes AsyncWrite holds that the loop has not taken yet.
func (c *Conn) Buffered() int {
	if !c.loop.InEventLoop() {
		return int(c.async.loopBuf.Load())
	}
	return c.buffered()
}

// buffered is Buffered on the loop.
func (c *Conn) buffered() int { return len(c.out) + len(c.sending) }

// Writable reports whether the buffered bytes are under the high watermark
// (or back under the low one). Safe from any goroutine: off the loop it is
// the state as of the loop's last change, the signal for producers that use
// AsyncWrite.
func (c *Conn) Writable() bool { return c.writable.Load() }

func (c *Conn) setWritable(w bool) {
	c.writable.Store(w)
	if c.wh != nil {
		c.onWritabilityChanged(w)
	}
}

// flush hands the outbound buffer to the driver unless a send is in flight;
// the send completion sends what piled up meanwhile.
func (c *Conn) flush() {
	c.clear(flagQueued)
	if c.has(flagInFlight) || len(c.out) == 0 || c.st == connClosed {
		return
	}
	c.out, c.sending = c.sending[:0], c.out
	c.set(flagInFlight)
	c.loop.drv.Send(c.fd, c.tag(opSend), c.sending)
	c.publishBuffered()
}

// flushConns flushes every connection written to this iteration.
func (l *Loop) flushConns() {
	for i, c := range l.flushList {
		l.flushList[i] = nil
		c.flush()
	}
	l.flushList = l.flushList[:0]
}

// maxIdleBuffer caps the outbound buffer a connection keeps between bursts.
const maxIdleBuffer = 256 << 10

func (c *Conn) onSend(comp *driver.Completion) {
	c.clear(flagInFlight)
	if comp.Res < 0 {
		c.sending = c.sending[:0]
		if comp.Res != -int32(unix.ECANCELED) {
			c.abortWith(comp.Err())
		}
		c.maybeRelease()
		return
	}
	if cap(c.sending) > maxIdleBuffer {
		c.loop.bufs.put(c.sending)
		c.sending = nil
	} else {
		c.sending = c.sending[:0]
	}
	if !c.writable.Load() && c.buffered() < c.cfg.lowWater {
		c.setWritable(true)
	}
	if len(c.out) > 0 && c.st != connClosed {
		c.flush()
		return
	}
	if cap(c.out) > maxIdleBuffer { // idle: keep no more than maxIdleBuffer each
		c.loop.bufs.put(c.out)
		c.out = nil
	}
	if c.has(flagDropBufs) {
		c.clear(flagDropBufs)
		c.releaseSendBuffers()
	}
	c.publishBuffered()
	c.afterDrain()
	c.maybeRelease()
}
