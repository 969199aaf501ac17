package websocket

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/tasks"
)

// MessageKind is a data message's kind.
type MessageKind uint8

const (
	Text   MessageKind = MessageKind(opText)
	Binary MessageKind = MessageKind(opBinary)
)

// String names the kind.
func (k MessageKind) String() string {
	switch k {
	case Text:
		return "text"
	case Binary:
		return "binary"
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// Handler receives a connection's events. Like engine.Handler, every
// callback runs on the connection's loop, one at a time.
type Handler interface {
	// OnOpen is called once the 101 answer is queued (a server) or
	// checked (Dial).
	OnOpen(c *Conn)
	// OnMessage is called with each whole message: text is valid UTF-8.
	// payload is valid only during the call; copy what you keep.
	OnMessage(c *Conn, kind MessageKind, payload []byte)
	// OnClose is called once, when the connection is gone, with the close
	// code and reason: the peer's after a close handshake (CloseNoStatus
	// if its close frame had no code) with err nil; the code this side
	// sent when it failed the connection, with err saying why (matching
	// ErrProtocol for the peer's violations); CloseAbnormal when the
	// connection ended without a close handshake, with the engine's error
	// (io.EOF...) or one matching ErrTimeout; when the loop shut down, the code of
	// the close frame sent then (CloseGoingAway unless ShutdownHandler
	// closed with another) and engine.ErrShutdown.
	OnClose(c *Conn, code int, reason string, err error)
}

// ShutdownHandler is an optional Handler extension: the connection's loop
// is shutting down (engine.ShutdownHandler). OnShutdown may send a last
// message, or Close with a code and reason of its own; after it the
// connection sends a close frame with CloseGoingAway (unless it closed),
// flushes and closes without waiting for the peer's answer.
type ShutdownHandler interface {
	OnShutdown(c *Conn)
}

// WritabilityHandler is an optional Handler extension: the engine's
// watermark signal (engine.WritabilityHandler) for this connection, after
// the slow-consumer policy has acted.
type WritabilityHandler interface {
	OnWritabilityChanged(c *Conn, writable bool)
}

// Errors of the connection's methods.
var (
	// ErrClosed: the close handshake has begun (or the connection is gone);
	// no data can be sent.
	ErrClosed = errors.New("websocket: connection closing")
	// ErrTimeout matches (errors.Is) the error of a connection closed for
	// passing one of its Timeouts: a request head not whole within
	// Handshake (EngineHandler), a Dial answer not within it, no answer to
	// a close frame within Close, nothing from the peer for a Ping interval
	// after a ping. The error says which; it matches
	// os.ErrDeadlineExceeded too and has a Timeout method, as a net.Conn's
	// deadline errors.
	ErrTimeout = errors.New("websocket: timed out")
	// ErrSlowConsumer: the peer did not read (CloseSlow).
	ErrSlowConsumer = errors.New("websocket: peer does not read (slow consumer)")
	// ErrAsyncDropped: frames AsyncWriteMessage had accepted were dropped
	// because the connection closed while a NextWriter message was open
	// (they could not follow its close frame); OnClose's error wraps it.
	ErrAsyncDropped = errors.New("websocket: accepted asynchronous frames dropped by a close during a fragmented message")
	errBadKind      = errors.New("websocket: message kind must be Text or Binary")
	errControlSize  = errors.New("websocket: ping payload over 125 bytes")

	errCloseTimeout error = timeoutError("websocket: peer did not answer the close frame within Timeouts.Close")
	errPingTimeout  error = timeoutError("websocket: peer sent nothing for a ping interval after a ping (Timeouts.Ping)")
)

// timeoutError is an error matching ErrTimeout, saying which timeout.
type timeoutError string

func (e timeoutError) Error() string { return string(e) }

// Is matches ErrTimeout and os.ErrDeadlineExceeded.
func (e timeoutError) Is(target error) bool {
	return target == ErrTimeout || target == os.ErrDeadlineExceeded
}

// Timeout reports true, as net.Error's.
func (e timeoutError) Timeout() bool { return true }

// Conn is a WebSocket connection served by one loop. Methods that send say
// what they do off the loop.
type Conn struct {
	ec          *engine.Conn // its loop, watermarks; for wss, TLS is its transport (package looptls)
	h           Handler
	cfg         *config
	subprotocol string
	client      bool // Dial's: frames sent are masked, frames received must not be

	// Read side (loop only).
	hdr         header
	inFrame     bool  // in the payload of hdr
	remaining   int64 // payload bytes of hdr still due
	maskPos     int
	msgKind     MessageKind // kind of the fragmented message in progress, 0 if none
	deflate     bool        // permessage-deflate was negotiated
	msgDeflated bool        // the message in progress is compressed (RSV1)
	msgText     utf8Checker
	msg         []byte // fragments of the message in progress
	ctl         []byte // a control frame's payload that spans reads

	// Close state (loop only).
	closeSent  bool // a close frame was written
	closeDone  bool // the TCP connection is being closed
	closeCode  int
	closeWhy   string
	closeErr   error
	dropped    int // bytes of accepted async frames a close during a fragmented message dropped
	closeTimer tasks.Future[struct{}]
	paused     bool // PauseReading paused the connection

	// Keepalive (loop only).
	pingTimer tasks.Future[struct{}]
	pingOut   bool // a ping was sent and nothing has arrived since

	// The message NextWriter is sending (loop only).
	wr MessageWriter

	// Hub memberships (loop only); ended is set when OnClose begins;
	// hubPauses counts the hubs that paused its reads (backpressure).
	hubs      []*hubMember
	hubPauses int
	ended     bool

	// Writes from other goroutines: amu orders AsyncWriteMessage against
	// the close frame, so no data frame follows it.
	amu       sync.Mutex
	asyncShut bool
	usedAsync atomic.Bool
}

// Conn returns the engine connection underneath (its loop, addresses,
// Buffered...). Writing raw bytes to it breaks the framing. Over wss TLS
// is its transport: looptls.State(c.Conn()) tells the peer's
// certificates, ALPN and SNI.
func (c *Conn) Conn() *engine.Conn { return c.ec }

// Subprotocol returns the subprotocol selected at the upgrade, or "".
func (c *Conn) Subprotocol() string { return c.subprotocol }

// Writable reports whether the bytes not yet sent are under the high
// watermark; safe from any goroutine.
func (c *Conn) Writable() bool { return c.ec.Writable() }

// WriteMessage sends p as one frame of kind. On the loop the frame is
// copied into the connection's output and never refused for size (past the
// high watermark the connection turns unwritable); off the loop it is
// AsyncWriteMessage. It returns ErrClosed once a close frame was sent, and
// on the loop ErrMessageOpen while a NextWriter message is being sent.
func (c *Conn) WriteMessage(kind MessageKind, p []byte) error {
	if kind != Text && kind != Binary {
		return errBadKind
	}
	if !c.ec.Loop().InEventLoop() {
		return c.AsyncWriteMessage(kind, p)
	}
	if c.wr.open && !c.closeSent && !c.closeDone {
		return ErrMessageOpen
	}
	return c.writeFrame(opcode(kind), p)
}

// writeFrame writes one frame on the loop.
func (c *Conn) writeFrame(op opcode, p []byte) error {
	if c.closeSent || c.closeDone {
		return ErrClosed
	}
	if c.compress(op, p) {
		bp, f := c.deflatedFrame(op, p)
		err := c.write(f)
		putFrame(bp)
		return err
	}
	return c.writeRaw(true, false, op, p)
}

// writeRaw writes one frame with payload p as it is (no compression) on
// the loop: fin ends the message, rsv1 marks a compressed one's first
// frame.
func (c *Conn) writeRaw(fin, rsv1 bool, op opcode, p []byte) error {
	var hb [maxHeader]byte
	h, key := c.appendHeader(hb[:0], fin, op, len(p))
	if rsv1 {
		h[0] |= 0x40
	}
	if _, err := c.ec.Write(h); err != nil {
		return err
	}
	switch {
	case len(p) == 0:
	case c.client:
		return c.writeMasked(key, p)
	default:
		if _, err := c.ec.Write(p); err != nil {
			return err
		}
	}
	return nil
}

// maskChunk is how much of a client's payload is masked at a time, on the
// stack, on its way into the engine's output: the caller's bytes are left
// as they are and nothing is allocated.
const maskChunk = 4 << 10

// writeMasked writes p masked with key to the engine connection.
func (c *Conn) writeMasked(key [4]byte, p []byte) error {
	var buf [maskChunk]byte
	for len(p) > 0 {
		n := copy(buf[:], p)
		maskBytes(key, 0, buf[:n]) // maskChunk is a multiple of 4: each chunk starts at key[0]
		if _, err := c.ec.Write(buf[:n]); err != nil {
			return err
		}
		p = p[n:]
	}
	return nil
}

// write writes p, whole frames, on the loop.
func (c *Conn) write(p []byte) error {
	_, err := c.ec.Write(p)
	return err
}

// engineSide is the engine.Handler of a connection, ws or wss alike: the
// same struct as Conn, with the engine's callbacks kept off Conn's API.
type engineSide Conn

func (s *engineSide) OnOpen(ec *engine.Conn)                      { (*Conn)(s).opened(ec) }
func (s *engineSide) OnData(_ *engine.Conn, b []byte)             { (*Conn)(s).data(b) }
func (s *engineSide) OnClose(_ *engine.Conn, err error)           { (*Conn)(s).closed(err) }
func (s *engineSide) OnShutdown(*engine.Conn)                     { (*Conn)(s).shutdown() }
func (s *engineSide) OnWritabilityChanged(_ *engine.Conn, w bool) { (*Conn)(s).writability(w) }

// appendHeader appends the header of a frame this side sends: a client's
// is masked with a fresh key, returned for the payload.
func (c *Conn) appendHeader(dst []byte, fin bool, op opcode, n int) ([]byte, [4]byte) {
	if !c.client {
		return appendHeader(dst, fin, op, n, false, [4]byte{}), [4]byte{}
	}
	key := maskKey()
	return appendHeader(dst, fin, op, n, true, key), key
}

// appendFrame appends a whole frame with payload p, masked on a client.
func (c *Conn) appendFrame(dst []byte, op opcode, p []byte) []byte {
	dst, key := c.appendHeader(dst, true, op, len(p))
	start := len(dst)
	dst = append(dst, p...)
	if c.client {
		maskBytes(key, 0, dst[start:])
	}
	return dst
}

// maskKey returns a fresh masking key. RFC 6455 (§5.3) wants it
// unpredictable to intermediaries: math/rand/v2's global source is ChaCha8
// seeded from the system's entropy, per thread, with no lock and no
// allocation, which crypto/rand (a system call per key on some kernels)
// would not be for a key per frame.
func maskKey() [4]byte {
	var k [4]byte
	v := rand.Uint32()
	k[0], k[1], k[2], k[3] = byte(v), byte(v>>8), byte(v>>16), byte(v>>24)
	return k
}

// framePool holds the buffers AsyncWriteMessage builds a frame in (the
// engine copies it), so that steady sending allocates nothing.
var framePool = sync.Pool{New: func() any { return new([]byte) }}

// maxPooledFrame keeps a huge message's buffer out of the pool.
const maxPooledFrame = 64 << 10

// AsyncWriteMessage sends p as one frame of kind from any goroutine: the
// frame is copied and written on the loop, in the order of the calling
// goroutine's calls. It returns engine.ErrWriteBufferFull, sending nothing,
// past the connection's async write limit (engine.BufferLimits.AsyncWrite): the
// producer's signal to slow down or drop. ErrClosed once a close frame was
// sent.
func (c *Conn) AsyncWriteMessage(kind MessageKind, p []byte) error {
	if kind != Text && kind != Binary {
		return errBadKind
	}
	return c.asyncFrame(opcode(kind), p)
}

func (c *Conn) asyncFrame(op opcode, p []byte) error {
	var bp *[]byte
	var b []byte
	if c.compress(op, p) {
		bp, b = c.deflatedFrame(op, p)
	} else {
		bp = framePool.Get().(*[]byte)
		b = c.appendFrame((*bp)[:0], op, p)
		*bp = b
	}
	c.usedAsync.Store(true)
	c.amu.Lock()
	err := ErrClosed
	if !c.asyncShut {
		err = c.ec.AsyncWrite(b)
	}
	c.amu.Unlock()
	putFrame(bp)
	return err
}

// compress reports whether a data frame is sent compressed.
func (c *Conn) compress(op opcode, p []byte) bool {
	return c.deflate && !op.control() && len(p) >= compressThreshold
}

// deflatedFrame builds a compressed message's frame for c (masked on a
// client).
func (c *Conn) deflatedFrame(op opcode, p []byte) (*[]byte, []byte) {
	if !c.client {
		return deflatedFrame(op, p, false, [4]byte{})
	}
	return deflatedFrame(op, p, true, maskKey())
}

// deflatedFrame builds a compressed message's frame (RSV1 set) in a pooled
// buffer: the payload is deflated behind room for the longest header,
// which is then written just before it (and, masked, the payload masked
// in place with key).
func deflatedFrame(op opcode, p []byte, masked bool, key [4]byte) (*[]byte, []byte) {
	bp := framePool.Get().(*[]byte)
	b := append((*bp)[:0], make([]byte, maxHeader)...)
	b = appendDeflated(b, p)
	var hb [maxHeader]byte
	h := appendHeader(hb[:0], true, op, len(b)-maxHeader, masked, key)
	if masked {
		maskBytes(key, 0, b[maxHeader:])
	}
	h[0] |= 0x40 // RSV1: compressed (RFC 7692 §6)
	start := maxHeader - len(h)
	copy(b[start:], h)
	*bp = b
	return bp, b[start:]
}

// putFrame gives a frame's buffer back to the pool unless it is huge.
func putFrame(bp *[]byte) {
	if cap(*bp) <= maxPooledFrame {
		*bp = (*bp)[:0]
		framePool.Put(bp)
	}
}

// Ping sends a ping with payload p (at most 125 bytes); the peer's pong
// arrives as any frame does and keeps the connection alive (see
// Timeouts.Ping). Off the loop it goes through AsyncWrite.
func (c *Conn) Ping(p []byte) error {
	if len(p) > maxControlPayload {
		return errControlSize
	}
	if !c.ec.Loop().InEventLoop() {
		return c.asyncFrame(opPing, p)
	}
	return c.writeFrame(opPing, p)
}

// Close starts the close handshake with code and reason: the close frame
// is sent, no data after it, and the connection closes when the peer
// answers or Timeouts.Close passes. OnClose then reports the peer's code.
// Off the loop it hands itself to the loop.
func (c *Conn) Close(code int, reason string) error {
	if !validCloseCode(code) || len(reason) > maxCloseReason || !utf8.ValidString(reason) {
		return errCloseArgs
	}
	if !c.ec.Loop().InEventLoop() {
		return c.ec.Loop().Execute(tasks.Func(func() { c.startClose(code, reason) }))
	}
	if c.closeSent || c.closeDone {
		return ErrClosed
	}
	c.startClose(code, reason)
	return nil
}

// startClose sends a close frame and waits for the peer's, both within
// the close timeout.
func (c *Conn) startClose(code int, reason string) {
	if c.closeSent || c.closeDone {
		return
	}
	c.closeSent = true
	c.closeCode, c.closeWhy = code, reason
	t, err := c.ec.Loop().Schedule(tasks.Func(c.closeTimedOut), c.cfg.closeTimeout)
	if err != nil {
		c.shut(CloseAbnormal, "", err)
		return
	}
	c.closeTimer = t
	c.sendClose()
}

// closeRetry is how soon a close frame the async write limit refused is
// offered again (data frames accepted before it are being sent).
const closeRetry = 5 * time.Millisecond

// sendClose queues the close frame startClose recorded, retrying while the
// async write limit refuses it.
func (c *Conn) sendClose() {
	if c.closeDone || c.queueClose(c.closeCode, c.closeWhy) {
		return
	}
	_, _ = c.ec.Loop().Schedule(tasks.Func(c.sendClose), closeRetry)
}

func (c *Conn) closeTimedOut() {
	c.closeTimer = nil
	if !c.closeDone {
		c.shut(CloseAbnormal, "", errCloseTimeout)
	}
}

// queueClose writes a close frame, after every data frame
// AsyncWriteMessage accepted, and refuses data from then on. It reports
// false when the frame could not be queued: the async write limit is full.
func (c *Conn) queueClose(code int, reason string) bool {
	var pb [maxControlPayload]byte
	p := appendClosePayload(pb[:0], code, reason)
	c.closeSent = true
	c.amu.Lock()
	defer c.amu.Unlock()
	c.asyncShut = true
	var b [maxHeader + maxControlPayload]byte
	f := c.appendFrame(b[:0], opClose, p)
	if c.wr.open {
		// The close frame ends the fragmented message unfinished; the
		// frames held behind it cannot follow it and are dropped (OnClose
		// reports it: ErrAsyncDropped).
		c.dropped += c.ec.DiscardAsync()
		c.wr.end()
		return c.write(f) == nil
	}
	if c.usedAsync.Load() {
		// The close frame goes behind the async frames already accepted.
		return c.ec.AsyncWrite(f) == nil
	}
	return c.write(f) == nil
}

// shut closes the TCP connection (after what was written is sent) and
// records how the WebSocket ended, for OnClose.
func (c *Conn) shut(code int, reason string, err error) {
	if c.closeDone {
		return
	}
	c.closeDone = true
	c.closeCode, c.closeWhy, c.closeErr = code, reason, err
	if err != nil {
		_ = c.ec.CloseWithError(err)
	} else {
		_ = c.ec.Close()
	}
}

// fail answers a peer's violation: a close frame with the code, then the
// TCP close at once (RFC 6455 §7.1.7), without waiting for an answer.
func (c *Conn) fail(err error) {
	code := CloseProtocolError
	var pe *protocolError
	if errors.As(err, &pe) {
		code = pe.code
	}
	if !c.closeSent {
		c.queueClose(code, "")
	}
	c.shut(code, "", err)
}
