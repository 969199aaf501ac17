package websocket

import (
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/tasks"
)

// maxIdleMessage caps the reassembly buffer a connection keeps between
// messages: a large message's buffer is given back.
const maxIdleMessage = 64 << 10

// opened starts a connection on its engine connection.
func (c *Conn) opened(ec *engine.Conn) {
	c.ec = ec
	if d := c.cfg.pingInterval; d > 0 {
		if t, err := c.ec.Loop().ScheduleAtFixedRate(tasks.Func(c.keepalive), d, d); err == nil {
			c.pingTimer = t
		}
	}
	c.h.OnOpen(c)
}

// keepalive runs every ping interval: a peer that sent nothing since the
// last ping is gone.
func (c *Conn) keepalive() {
	if c.closeDone {
		return
	}
	if c.pingOut {
		c.shut(CloseAbnormal, "", errPingTimeout)
		return
	}
	c.pingOut = true
	_ = c.writeFrame(opPing, nil)
}

// data parses frames incrementally: a header split across reads is kept
// (at most 14 bytes), payloads are unmasked in place and handed on as they
// come, so the transport's keep limit never bounds a frame.
func (c *Conn) data(b []byte) {
	c.pingOut = false
	overLimit := false
	for len(b) > 0 && !c.closeDone {
		if !overLimit && !c.ec.Reading() {
			// Paused: the rest waits for ResumeRead, unless it is more
			// than the engine keeps (bytes that arrived while the pause
			// took effect), which is parsed now rather than lost.
			if c.ec.Keep(b) == nil {
				return
			}
			overLimit = true
		}
		if !c.inFrame {
			h, n, err := parseHeader(b, !c.client, c.deflate)
			if err != nil {
				c.fail(err)
				return
			}
			if n == 0 {
				break
			}
			if err := c.startFrame(h); err != nil {
				c.fail(err)
				return
			}
			b = b[n:]
			if int64(len(b)) >= h.length && (h.op.control() || h.fin && h.op != opContinuation) {
				// Whole in this read: handled in place.
				p := b[:h.length]
				b = b[h.length:]
				if h.masked {
					maskBytes(h.mask, 0, p)
				}
				c.wholeFrame(h, p)
				continue
			}
			c.hdr, c.inFrame, c.remaining, c.maskPos = h, true, h.length, 0
			if h.op.control() {
				c.ctl = c.ctl[:0]
			}
		}
		k := int(min(int64(len(b)), c.remaining))
		p := b[:k]
		b = b[k:]
		if c.hdr.masked {
			c.maskPos = maskBytes(c.hdr.mask, c.maskPos, p)
		}
		c.remaining -= int64(k)
		if err := c.payload(p); err != nil {
			c.fail(err)
			return
		}
	}
	if len(b) > 0 && !c.closeDone {
		if err := c.ec.Keep(b); err != nil {
			c.fail(fmt.Errorf("websocket: %d bytes unread: %w", len(b), err))
		}
	}
}

// startFrame checks a frame against the message in progress and the size
// limit.
func (c *Conn) startFrame(h header) error {
	switch {
	case h.op.control():
		return nil
	case h.op == opContinuation && c.msgKind == 0:
		return protoErr(CloseProtocolError, "continuation frame with no message in progress")
	case h.op != opContinuation && c.msgKind != 0:
		return protoErr(CloseProtocolError, "new message inside a fragmented one")
	case h.length > c.cfg.maxMessage-int64(len(c.msg)): // no overflow: both sides are below 2^63
		return protoErr(CloseTooBig, "message over %d bytes", c.cfg.maxMessage)
	}
	if h.op != opContinuation {
		c.msgKind = MessageKind(h.op)
		c.msgDeflated = h.rsv1
		c.msg = c.msg[:0]
	}
	return nil
}

// wholeFrame handles a control frame or an unfragmented message that came
// whole in one read: the payload is not copied.
func (c *Conn) wholeFrame(h header, p []byte) {
	op := h.op
	if op.control() {
		c.control(op, p)
		return
	}
	c.msgKind = 0
	if h.rsv1 {
		c.deliverInflated(MessageKind(op), p)
		return
	}
	if op == opText && !utf8.Valid(p) {
		c.fail(protoErr(CloseInvalidPayload, "text message is not UTF-8"))
		return
	}
	if !c.closeSent {
		c.onMessage(MessageKind(op), p)
	}
}

// deliverInflated inflates a compressed message, bounded by the maximum
// message size, checks text, and hands it on.
func (c *Conn) deliverInflated(kind MessageKind, p []byte) {
	bp, err := inflate(p, c.cfg.maxMessage)
	if err != nil {
		c.fail(err)
		return
	}
	defer releaseInflated(bp)
	if kind == Text && !utf8.Valid(*bp) {
		c.fail(protoErr(CloseInvalidPayload, "text message is not UTF-8"))
		return
	}
	if !c.closeSent {
		c.onMessage(kind, *bp)
	}
}

// payload takes the next piece of the current frame's payload; the frame
// ends when c.remaining is 0.
func (c *Conn) payload(p []byte) error {
	op := c.hdr.op
	if op.control() {
		c.ctl = append(c.ctl, p...)
		if c.remaining == 0 {
			c.inFrame = false
			c.control(op, c.ctl)
		}
		return nil
	}
	if c.msgKind == Text && !c.msgDeflated && !c.msgText.write(p) {
		return protoErr(CloseInvalidPayload, "text message is not UTF-8")
	}
	c.msg = append(c.msg, p...)
	if c.remaining > 0 {
		return nil
	}
	c.inFrame = false
	if !c.hdr.fin {
		return nil
	}
	kind := c.msgKind
	c.msgKind = 0
	switch {
	case c.msgDeflated:
		c.deliverInflated(kind, c.msg)
	case kind == Text && !c.msgText.done():
		return protoErr(CloseInvalidPayload, "text message ends inside a code point")
	case !c.closeSent:
		c.onMessage(kind, c.msg)
	}
	if cap(c.msg) > maxIdleMessage {
		c.msg = nil
	} else {
		c.msg = c.msg[:0]
	}
	return nil
}

// control answers a ping, takes a pong, and completes the close handshake.
func (c *Conn) control(op opcode, p []byte) {
	switch op {
	case opPing:
		if !c.closeSent {
			_ = c.writeFrame(opPong, p)
		}
	case opClose:
		code, reason, err := parseClose(p)
		if err != nil {
			c.fail(err)
			return
		}
		if c.closeTimer != nil {
			c.closeTimer.Cancel()
			c.closeTimer = nil
		}
		if !c.closeSent {
			c.queueClose(code, "") // echoed; an empty close is answered empty
		}
		c.shut(code, reason, nil)
	}
}

// closed ends the connection once its transport has closed.
func (c *Conn) closed(err error) {
	if c.closeTimer != nil {
		c.closeTimer.Cancel()
		c.closeTimer = nil
	}
	if c.pingTimer != nil {
		c.pingTimer.Cancel()
		c.pingTimer = nil
	}
	c.amu.Lock()
	c.asyncShut = true
	c.amu.Unlock()
	code, reason, why := c.closeCode, c.closeWhy, c.closeErr
	switch {
	case !c.closeDone:
		// The TCP connection ended with no close handshake.
		code, reason, why = CloseAbnormal, "", err
	case why == nil && err != nil && !errors.Is(err, engine.ErrConnClosed):
		why = err // the handshake completed but the close did not flush
	}
	if c.dropped > 0 {
		why = errors.Join(why, fmt.Errorf("%w: %d bytes", ErrAsyncDropped, c.dropped))
	}
	c.msg, c.ctl = nil, nil
	if c.wr.open {
		c.wr.end()
	}
	c.ended = true
	c.leaveHubs()
	c.h.OnClose(c, code, reason, why)
}

// shutdown: the loop is shutting down (engine.ShutdownHandler).
// The handler's OnShutdown (ShutdownHandler) may send a last message or
// Close with a code of its own; then a close frame with 1001 (going away)
// is sent unless one was, and the connection closes once it is flushed,
// without waiting for the peer's answer (the loop is going). OnClose gets
// the code sent and engine.ErrShutdown.
func (c *Conn) shutdown() {
	if c.closeDone {
		return
	}
	if sh, ok := c.h.(ShutdownHandler); ok && !c.closeSent {
		sh.OnShutdown(c)
		if c.closeDone {
			return
		}
	}
	if c.closeTimer != nil {
		c.closeTimer.Cancel()
		c.closeTimer = nil
	}
	if !c.closeSent {
		c.closeCode, c.closeWhy = CloseGoingAway, ""
		c.queueClose(CloseGoingAway, "")
	}
	c.shut(c.closeCode, c.closeWhy, engine.ErrShutdown)
}

// writability applies the slow-consumer policy to the watermark signal
// (which, over TLS, counts ciphertext), and passes it to the hubs c is a
// member of.
func (c *Conn) writability(writable bool) {
	switch {
	case !writable && c.cfg.slow == CloseSlow && !c.closeDone && len(c.hubs) == 0:
		// Not a hub member (whose hub gives it a grace first): dropped at
		// once.
		c.dropSlow()
	case !writable && !c.paused:
		c.paused = true
		c.ec.PauseRead()
	case writable && c.paused:
		c.paused = false
		if c.hubPauses == 0 { // else a hub holds its reads: it resumes them
			c.ec.ResumeRead()
		}
	}
	if len(c.hubs) > 0 {
		c.hubWritability(writable)
	}
	if wh, ok := c.h.(WritabilityHandler); ok {
		wh.OnWritabilityChanged(c, writable)
	}
}

// dropSlow ends a slow consumer under CloseSlow: a close frame would wait
// behind what the peer does not read, so the connection is dropped at once,
// its unsent bytes with it.
func (c *Conn) dropSlow() {
	if c.closeDone {
		return
	}
	c.closeDone = true
	c.closeCode, c.closeWhy, c.closeErr = ClosePolicyViolation, "slow consumer", ErrSlowConsumer
	_ = c.ec.Abort()
}
