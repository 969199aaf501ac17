package engine

import (
	"errors"
	"fmt"
	"io"
)

// The inbound side of a connection: what a handler keeps of a delivery to
// read again with the next one (Netty's cumulation), bounded per connection.
//
// A frame that sits whole in the bytes just received is never copied: OnData
// gets the driver's buffer and the handler slices it. Only the unfinished
// tail a handler keeps is copied, once, and the next bytes are appended to
// it, so a frame that spans reads is assembled in one buffer and parsed once.

// defaultKeepLimit bounds the bytes a connection keeps between deliveries
// (BufferLimits.Keep): big enough for a 100 KB value split across reads, small
// enough that a thousand peers sending half a frame cannot take a gigabyte.
const defaultKeepLimit = 1 << 20

// maxIdleKeep caps the inbound buffer a connection holds on to once it has
// nothing kept: a large frame's buffer is given back.
const maxIdleKeep = 64 << 10

// ErrKeepLimit is returned (wrapped, with the sizes) by Keep for more bytes
// than the connection's keep limit: a frame larger than the handler allowed
// for. Raise the limit with BufferLimits.Keep, or per connection with
// SetKeepLimit (package frame does it for its bounded split functions).
var ErrKeepLimit = errors.New("engine: bytes kept over the connection's keep limit")

// keepLimitError says how many bytes were to be kept and the limit.
func keepLimitError(n, limit int) error {
	return fmt.Errorf("%w: %d bytes, limit %d (BufferLimits.Keep, Conn.SetKeepLimit)", ErrKeepLimit, n, limit)
}

// KeepLimit returns the connection's keep limit: BufferLimits.Keep, unless
// SetKeepLimit changed it.
func (c *Conn) KeepLimit() int { return c.keepLimit }

// SetKeepLimit changes the connection's keep limit (see Keep), for a
// protocol that learns its largest frame once the connection is open (a
// frame splitter with its own maximum, a negotiated size). Loop only (from
// a callback or task); n must be positive.
func (c *Conn) SetKeepLimit(n int) error {
	switch {
	case !c.loop.InEventLoop():
		return errOffLoop("SetKeepLimit")
	case n <= 0:
		return fmt.Errorf("engine: keep limit %d (expected > 0)", n)
	}
	c.keepLimit = n
	return nil
}

var errKeepOutsideOnData = errors.New("engine: Keep called outside OnData")

// Keep asks for p to be delivered again, first, with the next bytes
// received: a handler keeps the unfinished frame at the end of b and returns.
// p is copied (it may be any part of b); a second call in the same OnData
// replaces the first. What OnData does not keep is consumed. After
// SetHandler in the same OnData, Keep adds p behind SetHandler's pending
// bytes, for the new handler.
//
// Keep may be called only from OnData; elsewhere it returns an error and
// keeps nothing. More than the keep limit (BufferLimits.Keep, default
// 1 MiB) returns ErrKeepLimit and keeps nothing; the handler
// decides what to do (typically CloseWithError).
//
// A connection reading more bytes only delivers kept ones with them, with
// one exception: ResumeRead delivers them again at once (at the end of the
// loop's iteration), so that requests pipelined before a PauseRead are
// served without waiting for new bytes.
func (c *Conn) Keep(p []byte) error {
	if !c.loop.InEventLoop() || !c.has(flagDelivering) {
		return errKeepOutsideOnData
	}
	if c.has(flagHandedOver) {
		// SetHandler ran in this OnData: p follows its pending, for the
		// new handler (what a frame splitter had left after the frame
		// that asked for the upgrade).
		if len(c.in)+len(p) > c.keepLimit {
			return keepLimitError(len(c.in)+len(p), c.keepLimit)
		}
		c.in = append(c.in, p...)
		return nil
	}
	if len(p) > c.keepLimit {
		c.in = c.in[:0]
		c.set(flagKeepSet)
		return keepLimitError(len(p), c.keepLimit)
	}
	c.set(flagKeepSet)
	if cap(c.in) < len(p) {
		nb := append(c.loop.bufs.get(len(p)), p...)
		c.releaseIn()
		c.in = nb
		return nil
	}
	// p may lie inside c.in; append moves it with memmove.
	c.in = append(c.in[:0], p...)
	return nil
}

// Kept returns the bytes kept and not yet delivered again; the slice is the
// connection's and valid until the next delivery. It is how OnReadClosed and
// OnClose see an unfinished frame. Loop only: elsewhere it returns nil.
func (c *Conn) Kept() []byte {
	if !c.loop.InEventLoop() {
		return nil
	}
	return c.in
}

// deliver calls OnData with the kept bytes followed by data.
func (c *Conn) deliver(data []byte) {
	b := data
	if len(c.in) > 0 {
		if need := len(c.in) + len(data); cap(c.in) < need {
			nb := append(c.loop.bufs.get(need), c.in...)
			c.releaseIn()
			c.in = nb
		}
		c.in = append(c.in, data...)
		b = c.in
	}
	c.set(flagDelivering)
	c.clear(flagKeepSet)
	c.onData(b)
	if c.has(flagHandedOver) {
		c.queueRedeliver() // the new handler's pending, and what the old kept
	}
	c.clear(flagDelivering | flagHandedOver)
	if !c.has(flagKeepSet) {
		c.in = c.in[:0]
	}
	if len(c.in) == 0 && cap(c.in) > maxIdleKeep {
		c.releaseIn()
	}
}

// releaseIn gives a large inbound buffer back to the loop's cache
// (bufcache.go).
func (c *Conn) releaseIn() {
	if cap(c.in) > maxIdleKeep {
		c.loop.bufs.put(c.in)
	}
	c.in = nil
}

// eofErr is why a connection closes on the peer's FIN: io.EOF, or
// io.ErrUnexpectedEOF when the handler kept an unfinished frame.
func (c *Conn) eofErr() error {
	if len(c.in) > 0 {
		return io.ErrUnexpectedEOF
	}
	return io.EOF
}

// queueRedeliver arranges for kept bytes to be delivered again at the end
// of the iteration (ResumeRead).
func (c *Conn) queueRedeliver() {
	pending := len(c.in) > 0 || c.has(flagEOFNotice) || c.tr != nil && !c.has(flagDecodeEnd)
	if pending && !c.has(flagRedeliver) {
		c.set(flagRedeliver)
		c.loop.redeliverList = append(c.loop.redeliverList, c)
	}
}

// redeliverKept delivers the kept bytes of the connections that resumed
// reading. Those queued while it runs wait for the next iteration, so a
// handler that pauses and resumes on every delivery cannot hold the loop.
func (l *Loop) redeliverKept() {
	n := len(l.redeliverList)
	for i := 0; i < n; i++ {
		c := l.redeliverList[i]
		l.redeliverList[i] = nil
		c.clear(flagRedeliver)
		if c.st != connOpen || c.has(flagReadPaused) {
			continue
		}
		if len(c.in) > 0 {
			c.deliver(nil)
		}
		if c.tr != nil {
			c.decode(nil) // what the transport kept while reading was paused
		}
		if c.has(flagEOFNotice) && c.st == connOpen {
			c.clear(flagEOFNotice)
			c.peerEOF()
		}
	}
	m := copy(l.redeliverList, l.redeliverList[n:])
	clear(l.redeliverList[m:])
	l.redeliverList = l.redeliverList[:m]
}

var (
	errSetHandlerOffLoop = errors.New("engine: SetHandler called off the connection's loop")
	errSetHandlerHeld    = errors.New("engine: SetHandler before the connection's transport opened it")
	errSetHandlerLayer   = errors.New("engine: SetHandler cannot add a transport to an open connection")
)

// SetHandler hands the connection to h, for a protocol upgrade (an HTTP
// server giving a WebSocket to its handler, a hijacked connection given to
// a net.Conn): h.OnOpen runs at once, every later callback goes to h, and
// pending, bytes the old handler received and did not consume, reach
// h.OnData first, at the end of the loop's iteration (as kept bytes do; see
// Keep). Optional handler interfaces are h's from then on. It may be called
// only on the loop, from a callback or task; elsewhere, or once the
// connection is closing, it returns an error and changes nothing.
func (c *Conn) SetHandler(h Handler, pending []byte) error {
	switch {
	case !c.loop.InEventLoop():
		return errSetHandlerOffLoop
	case c.st != connOpen:
		return ErrConnClosed
	case len(pending) > c.keepLimit:
		return keepLimitError(len(pending), c.keepLimit)
	case c.has(flagHeld):
		return errSetHandlerHeld
	}
	if _, ok := h.(*layered); ok {
		return errSetHandlerLayer
	}
	c.h = h
	c.wh, _ = h.(WritabilityHandler)
	if c.has(flagDelivering) {
		// The old handler's OnData is still running, its b perhaps in
		// c.in: pending goes to a buffer of its own, stays kept, and the
		// old handler reads no further (Reading); what it still keeps
		// follows pending (Keep).
		c.in = append([]byte(nil), pending...)
		c.set(flagKeepSet | flagHandedOver)
	} else {
		c.in = append(c.in[:0], pending...)
	}
	if c.has(flagReadEOF) {
		c.set(flagEOFNotice) // h learns of the peer's FIN after pending
	}
	c.onOpen()
	c.queueRedeliver()
	return nil
}
