package engine

import (
	"errors"
	"io"

	"github.com/ringloop/ringloop/internal/driver"
)

// Transport transforms a connection's bytes between its socket and its
// handler: it decodes what the socket receives into what OnData gets, and
// encodes what the handler writes into what the socket sends. TLS is one
// (package looptls); a plain TCP connection has none, and pays one nil check
// per path for the slot. The handler sees an ordinary *Conn: Write, Keep,
// PauseRead, AsyncWrite, Close and the optional handler interfaces mean what
// they mean on a plain connection, one level up.
//
// Every method runs on the connection's loop. The engine calls them in this
// order: Open once as the connection opens; Decode and Encode while it
// lives; CloseWrite at most once, as it closes gracefully or half-closes;
// Close once, last.
//
// What the engine does around the slot:
//
//   - Reading. Received bytes go to Decode, and the plaintext it returns to
//     OnData, through the same Keep, pause and hand-over rules as a plain
//     connection's. While reading is paused Decode is still given what
//     arrives, with no room to decode into: the transport keeps it, and
//     ResumeRead decodes it.
//   - Writing. Write and AsyncWrite queue plaintext; the engine encodes it
//     when it flushes the connection, once per loop iteration (all that the
//     handler wrote in the iteration at once, so a protocol's header and
//     payload written apart become one TLS record). Encode sees the
//     engine's buffer, never the caller's memory, so a caller's stack
//     buffer does not escape to the heap through the interface call.
//   - Backpressure. Buffered, the watermarks and the async write limit count
//     both the plaintext waiting to be encoded and the encoded bytes waiting
//     for the socket.
//   - Closing. Close and a loop's shutdown (after OnShutdown's last word)
//     encode what is left, call CloseWrite for the transport's own last word
//     (TLS's close_notify), flush and close; CloseWrite does the same, then
//     sends the FIN; Abort drops everything, with no last word. The close
//     timeout bounds the flush as on a plain connection.
//   - Opening. Open may hold the handler's OnOpen back (a handshake) until
//     the transport calls Wire.Open; meanwhile no other callback reaches the
//     handler, writes (by a dialer holding the *Conn) wait unencoded, and a
//     connection that closes never calls OnOpen nor OnClose: the transport
//     reports the failure its own way.
//
// The interface speaks of byte runs, not of a stream, so other owners of a
// socket can fill the same slot: a datagram socket would call Decode with
// one datagram at a time and Encode with each datagram it sends (a DTLS or
// QUIC-like layer); an HTTP/2 connection is a handler above the slot, not
// a second slot: its frames arrive decrypted in OnData and its writes are
// encoded on their way out with no copy of their own, so h2 by ALPN runs
// on the TLS transport as HTTP/1.1 does.
type Transport interface {
	// Open is called as the connection opens, before its handler's
	// OnOpen. It returns true to let OnOpen run at once, false to hold it
	// back until the transport calls Wire.Open (or closes the
	// connection).
	Open() bool
	// Decode is given in, bytes the socket received (nil when nothing new
	// arrived), valid only during the call: what the transport does not
	// decode now it copies. eof reports that the socket's input has ended
	// (the peer's FIN). Decode writes at most len(out) plaintext bytes into
	// out and returns how many; with an empty out it decodes nothing and
	// only keeps in. The engine delivers them and calls again, with in nil,
	// until Decode returns 0 or the handler stops reading. Its error ends
	// the input: io.EOF when the peer ended its stream cleanly (OnReadClosed,
	// or a close, follow as for a plain peer's FIN), anything else closes
	// the connection with that error, after the bytes written so far (the
	// transport's own alert, say) are flushed.
	Decode(in []byte, eof bool, out []byte) (int, error)
	// Encode turns plaintext p into the bytes to send, which it writes
	// with Wire.Write; p is valid only during the call. An error closes
	// the connection with it.
	Encode(p []byte) error
	// CloseWrite writes the transport's last word with Wire.Write (TLS's
	// close_notify), after the last plaintext was encoded. It is not
	// called while OnOpen is held back.
	CloseWrite()
	// Close is called once the connection has closed, before OnClose, with
	// OnClose's error: the transport ends what it still runs (a handshake)
	// and lets go of its buffers.
	Close(err error)
}

// Wire is a transport's hold on its connection below itself: where it
// writes encoded bytes, and how it releases a held OnOpen. Only the engine
// makes one, for the transport of a connection (Layer).
type Wire struct{ c *Conn }

var errWireOffLoop = errors.New("engine: Wire used off the connection's loop")

// Conn returns the connection.
func (w Wire) Conn() *Conn { return w.c }

// Write queues p to be sent as it is, behind the bytes encoded so far;
// plaintext the handler wrote and the engine has not yet encoded goes
// behind it. It accepts while the connection closes gracefully (the
// transport's last word, an alert), and refuses once the write side is
// shut or the connection closed. Loop only.
func (w Wire) Write(p []byte) (int, error) {
	c := w.c
	switch {
	case !c.loop.InEventLoop():
		return 0, errWireOffLoop
	case c.st == connClosed:
		return 0, ErrConnClosed
	case c.has(flagWrShut):
		return 0, ErrWriteClosed
	case len(p) == 0:
		return 0, nil
	}
	c.out = c.appendBuf(c.out, p)
	c.wrote()
	return len(p), nil
}

// Open runs the handler's OnOpen that Transport.Open held back (the
// handshake is done). The outbound buffers the setup grew are let go once
// sent, so an idle connection does not keep its handshake's flights; what
// was written meanwhile is encoded at the flush,
// and what arrived behind the handshake is decoded at the end of the
// iteration (so Open may be called from within Decode). It does nothing
// unless OnOpen is held back and the connection open. Loop only.
func (w Wire) Open() {
	c := w.c
	if !c.loop.InEventLoop() || !c.has(flagHeld) || c.st != connOpen {
		return
	}
	c.clear(flagHeld)
	c.releaseWhenSent()
	c.onOpen()
	if len(c.plain) > 0 {
		c.queueFlush()
	}
	c.queueRedeliver()
}

// Layer returns a Handler that serves each connection with h over the
// transport newTransport makes for it. Listen, Dial, Adopt and the rest
// take it as any handler; h receives the connection's *Conn, as on a
// plain connection. newTransport is called on the loop as the connection
// is created, before it opens; Layer(nil, f) is nil.
func Layer(h Handler, newTransport func(Wire) Transport) Handler {
	if h == nil || newTransport == nil {
		return nil
	}
	return &layered{h: h, newTransport: newTransport}
}

// layered is Layer's handler. The engine takes it apart as it creates a
// connection (newConn), so its methods run only for a caller that calls
// them itself; they forward to h.
type layered struct {
	h            Handler
	newTransport func(Wire) Transport
}

func (l *layered) OnOpen(c *Conn)             { l.h.OnOpen(c) }
func (l *layered) OnData(c *Conn, b []byte)   { l.h.OnData(c, b) }
func (l *layered) OnClose(c *Conn, err error) { l.h.OnClose(c, err) }

// Transport returns the connection's transport, nil for a plain one. Safe
// from any goroutine: it is set before the connection is handed to anyone
// and never changes.
func (c *Conn) Transport() Transport { return c.tr }

// decodeBuf is the room Decode gets per call: a few TLS records'
// plaintext.
const decodeBuf = 64 << 10

// decode hands in to the transport and delivers what it decodes while the
// connection reads (on the loop). The plaintext goes through a buffer of
// the loop's cache (bufcache.go), none held per connection.
func (c *Conn) decode(in []byte) {
	if c.has(flagDecodeEnd) {
		return
	}
	var out []byte
	if c.decodable() {
		out = c.loop.bufs.get(decodeBuf)
		out = out[:cap(out)]
	}
	for {
		n, err := c.tr.Decode(in, c.has(flagInputEnd), out)
		in = nil
		if n > 0 {
			c.deliver(out[:n])
		}
		if err != nil {
			c.decodeEnd(err)
			break
		}
		if n == 0 || !c.decodable() {
			break
		}
	}
	c.loop.bufs.put(out)
}

// decodable reports whether Decode may produce plaintext now: the handler
// opened and reads.
func (c *Conn) decodable() bool {
	return c.st == connOpen && !c.has(flagReadPaused|flagHeld|flagDecodeEnd)
}

// decodeEnd ends the input on the transport's word: the peer's clean end
// (as a plain peer's FIN), or an error that closes the connection.
func (c *Conn) decodeEnd(err error) {
	c.set(flagDecodeEnd | flagInputEnd)
	if c.has(flagRecvArmed) && c.st == connOpen {
		c.loop.drv.Cancel(c.fd, c.tag(driver.OpRecv))
	}
	if err == io.EOF && !c.has(flagHeld) {
		c.peerEOF()
		return
	}
	c.closeWith(err) // held back: the handshake failed
}

// encode hands the plaintext written since the last flush to the transport
// (on the loop). Plaintext waits while OnOpen is held back.
func (c *Conn) encode() {
	p := c.plain
	if len(p) == 0 || c.has(flagHeld) {
		return
	}
	c.plain = nil // what Encode writes goes to c.out through Wire.Write
	err := c.tr.Encode(p)
	if cap(p) > maxIdleBuffer {
		c.loop.bufs.put(p)
	} else {
		c.plain = p[:0]
	}
	if err != nil && c.st == connOpen {
		c.closeWith(err)
	}
}

// closeTransport encodes what is left and has the transport write its last
// word, as the connection closes or half-closes gracefully; a connection
// whose OnOpen is held back drops what was written to it.
func (c *Conn) closeTransport() {
	if c.has(flagHeld) {
		c.plain = c.plain[:0]
		return
	}
	c.encode()
	if !c.has(flagHalfShut) {
		c.tr.CloseWrite()
	}
}
