package engine

import (
	"golang.org/x/sys/unix"

	"github.com/ringloop/ringloop/internal/asyncq"
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
	c.queue(p)
	c.wrote()
	return len(p), nil
}

// queue appends p to what waits to be sent: the outbound buffer, or with a
// transport the plaintext it encodes at the flush.
func (c *Conn) queue(p []byte) {
	if c.tr == nil {
		c.out = c.appendBuf(c.out, p)
	} else {
		c.plain = c.appendBuf(c.plain, p)
	}
}

// appendBuf appends p to b; a buffer that must grow to a cacheable size
// comes from the loop's cache (bufcache.go), and b goes back to it.
func (c *Conn) appendBuf(b, p []byte) []byte {
	if need := len(b) + len(p); need > cap(b) && need >= minCached {
		b = c.growBuf(b, need)
	}
	return append(b, p...)
}

// growBuf moves b into a buffer with room for need bytes.
func (c *Conn) growBuf(b []byte, need int) []byte {
	nb := append(c.loop.bufs.get(need), b...)
	c.loop.bufs.put(b)
	return nb
}

// wrote follows bytes queued: the connection is flushed at the end of the
// iteration, and turns unwritable past the high watermark.
func (c *Conn) wrote() {
	c.noteWrite()
	if c.cfg.idle() {
		c.lastWr = now()
	}
	c.queueFlush()
	if c.writable.Load() && c.buffered() > c.cfg.highWater {
		c.setWritable(false)
	}
}

// queueFlush puts the connection on the loop's flush list.
func (c *Conn) queueFlush() {
	if !c.has(flagQueued) {
		c.set(flagQueued)
		c.loop.flushList = append(c.loop.flushList, c)
	}
}

// releaseWhenSent lets the connection's outbound buffers go once what was
// written has been sent (at once if nothing is pending), instead of keeping
// them for the next writes: a transport's setup (a TLS handshake's flights)
// writes a larger burst than what follows, and an idle connection should not
// hold that burst's buffer until the trim sweep (sendtrim.go) comes by.
// Wire.Open calls it; the next write allocates a buffer of its own size.
func (c *Conn) releaseWhenSent() {
	if c.has(flagInFlight) || len(c.out) > 0 || len(c.plain) > 0 {
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

// buffered is Buffered on the loop: with a transport, the plaintext not
// yet encoded counts too.
func (c *Conn) buffered() int { return len(c.out) + len(c.sending) + len(c.plain) }

// Writable reports whether the buffered bytes are under the high watermark
// (or back under the low one). Safe from any goroutine: off the loop it is
// the state as of the loop's last change, the signal for producers that use
// AsyncWrite.
func (c *Conn) Writable() bool { return c.writable.Load() }

func (c *Conn) setWritable(w bool) {
	c.writable.Store(w)
	if c.wh != nil && !c.has(flagHeld) {
		c.onWritabilityChanged(w)
	}
}

// flush hands the outbound buffer to the driver unless a send is in flight;
// the send completion sends what piled up meanwhile.
func (c *Conn) flush() {
	if c.tr != nil {
		c.encode() // before the flag clears: its writes find the connection queued
	}
	c.clear(flagQueued)
	if c.has(flagInFlight) || len(c.out) == 0 || c.st == connClosed {
		return
	}
	c.out, c.sending = c.sending[:0], c.out
	c.set(flagInFlight)
	c.loop.drv.Send(c.fd, c.tag(driver.OpSend), c.sending)
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
const maxIdleBuffer = asyncq.MaxIdleBuffer

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
