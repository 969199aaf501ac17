package looptls

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/internal/loopctl"
	"github.com/ringloop/ringloop/internal/taskq"
)

// ErrConnClosed is engine.ErrConnClosed: what writes to a closing
// connection return.
var ErrConnClosed = engine.ErrConnClosed

var (
	errKeepOutsideOnData = errors.New("looptls: Keep called outside OnData")
	errKeepHandedOver    = errors.New("looptls: Keep after SetHandler gave the connection away")
	errSetHandlerOffLoop = errors.New("looptls: SetHandler called off the connection's loop")
)

type connState uint8

const (
	stHandshake connState = iota
	stOpen
	stClosing // Close asked: close_notify sent, the engine connection closing
	stClosed  // the engine connection's OnClose ran
)

// Conn is an established TLS connection on an engine connection. Its
// methods are safe from any goroutine, as engine.Conn's are: off the loop
// Write is AsyncWrite, and Close, CloseWithError, Abort, PauseRead and
// ResumeRead hand themselves to the loop.
type Conn struct {
	w  *wrapper
	hs *handlers // the wrapper's, until SetHandler
	ec *engine.Conn
	tc *tls.Conn
	tr transport
	st connState

	opened     bool // OnOpen ran
	paused     bool // PauseRead in effect
	finSeen    bool // the peer's TCP FIN arrived
	readDone   bool // the handler heard that the peer finished sending (OnReadClosed)
	delivering bool // in OnData: Keep is allowed
	keepSet    bool // Keep was called in this OnData
	handedOver bool // SetHandler ran in this OnData: the old handler keeps nothing
	in         []byte
	proto      string

	hsErr    error // the handshake goroutine's result, read by hsDone on the loop
	closeErr error // OnClose's err
	hsDone   hsDone
	resume   resumeTask
	async    asyncWriter
	ctl      ctl
	value    atomic.Pointer[valueBox]
}

type valueBox struct{ v any }

func newConn(w *wrapper, ec *engine.Conn) *Conn {
	c := &Conn{w: w, hs: &w.hs, ec: ec}
	c.tr.init(ec, w.o.maxHandshake)
	if w.client {
		c.tc = tls.Client(&c.tr, w.cfg)
	} else {
		c.tc = tls.Server(&c.tr, w.cfg)
	}
	c.hsDone.c, c.resume.c, c.async.c, c.ctl.c = c, c, c, c
	return c
}

// handshake runs on a goroutine (a worker): crypto/tls's handshake cannot be
// resumed after its reader fails, so it must block for the peer's flights
// where blocking is allowed. The loop feeds it (transport.feed); it ends
// within the handshake timeout, or when the connection closes.
//
// The timeout closes the transport, as crypto/tls does when a context
// ends; a context with a deadline would cost a watching goroutine per
// handshake inside crypto/tls, and a timer besides.
func (c *Conn) handshake() {
	var timedOut atomic.Bool
	timer := time.AfterFunc(c.w.o.handshakeTimeout, func() {
		timedOut.Store(true)
		_ = c.tr.Close()
	})
	err := c.tc.HandshakeContext(context.Background())
	if !timer.Stop() || timedOut.Load() { // fired: the transport is closed, even if the handshake got through
		err = ErrHandshakeTimeout
	}
	if err != nil {
		err = fmt.Errorf("%w: %w", ErrHandshake, err)
	}
	c.hsErr = err
	// Refused only once the loop has shut down, which closed the
	// connection: nothing is left to do.
	_ = loopctl.Run(c.ec.Loop(), &c.hsDone)
}

// hsDone carries the handshake's result to the loop, behind the ciphertext
// the handshake wrote (both ride on the loop's control ring, in order).
type hsDone struct{ c *Conn }

func (t *hsDone) Run() {
	c := t.c
	if c.st == stClosed { // the connection ended during the handshake
		c.w.handshakeFailed(c)
		return
	}
	if c.hsErr != nil {
		c.st = stClosing
		var rh tls.RecordHeaderError
		if ph, ok := c.w.hs.h.(PlaintextHandler); ok && errors.As(c.hsErr, &rh) && rh.Conn != nil {
			ph.OnPlaintext(c.ec, rh.RecordHeader[:])
		}
		_ = c.ec.CloseWithError(c.hsErr)
		return
	}
	c.tr.establish()
	// The handshake's flights grew the engine connection's outbound
	// buffers past what an established connection usually writes: an idle
	// one keeps none of them.
	c.ec.ReleaseSendBuffers()
	c.st = stOpen
	c.proto = c.tc.ConnectionState().NegotiatedProtocol
	defer c.recoverTask("OnOpen")
	c.opened = true
	c.hs.h.OnOpen(c)
	c.readRecords() // what arrived behind the handshake
	c.tr.stash()
}

// readRecords decrypts the records the transport holds and delivers their
// plaintext, batched up to a pooled buffer's size, until every whole record
// received is read, reading is paused or the connection closes. On the
// loop.
func (c *Conn) readRecords() {
	if !c.tr.more() {
		return
	}
	bp := plainPool.Get().(*[]byte)
	buf, n := *bp, 0
	for c.st == stOpen && !c.paused {
		m, err := c.tc.Read(buf[n:])
		n += m
		if m > 0 {
			c.tr.readOne()
		}
		more := err == nil && c.tr.more()
		if more && len(buf)-n >= maxPlaintext {
			continue // room for another record's plaintext, whole
		}
		if n > 0 {
			c.deliver(buf[:n])
			n = 0
		}
		if more {
			continue
		}
		if err != nil && err != errWouldBlock && c.st == stOpen {
			if err == io.EOF { // close_notify
				if c.hs.rh == nil {
					c.closeWith(io.EOF) // answer it and close
				} else if !c.readDone {
					c.readDone = true
					c.hs.rh.OnReadClosed(c)
				}
			} else {
				c.abortWith(fmt.Errorf("looptls: %w", err))
			}
		}
		break
	}
	plainPool.Put(bp)
}

// maxPlaintext is the most plaintext a record carries: a read of
// crypto/tls's given room for it takes a whole record's.
const maxPlaintext = 16384

// peerDone tells a HalfCloseHandler that the peer's TCP FIN ended its
// sending, once the records before it are delivered (a paused reader hears
// of it when it resumes); a FIN inside a record ends the connection with
// io.ErrUnexpectedEOF instead. On the loop.
func (c *Conn) peerDone() {
	if c.readDone || c.paused || c.st != stOpen {
		return
	}
	c.readRecords()
	if c.readDone || c.paused || c.st != stOpen {
		return
	}
	if c.truncated() == io.ErrUnexpectedEOF {
		c.abortWith(io.ErrUnexpectedEOF)
		return
	}
	c.readDone = true
	c.hs.rh.OnReadClosed(c)
}

// plainPool holds the buffers plaintext is decrypted into: one per loop
// at work, none per idle connection.
var plainPool = sync.Pool{New: func() any { b := make([]byte, 64<<10); return &b }}

// deliver calls OnData with the kept bytes followed by b.
func (c *Conn) deliver(b []byte) {
	if len(c.in) > 0 {
		c.in = append(c.in, b...)
		b = c.in
	}
	c.delivering, c.keepSet = true, false
	c.hs.h.OnData(c, b)
	c.delivering, c.handedOver = false, false
	if !c.keepSet {
		c.in = c.in[:0]
	}
	if len(c.in) == 0 && cap(c.in) > maxIdleBuf {
		c.in = nil
	}
}

// Keep asks for p, the unfinished end of what OnData received, to be
// delivered again, first, with the next plaintext (engine.Conn.Keep's
// rule): p is copied; a second call replaces the first; more than the keep
// limit (WithKeepLimit) returns engine.ErrKeepLimit and keeps nothing. Only
// from OnData.
func (c *Conn) Keep(p []byte) error {
	if !c.delivering || !c.ec.Loop().InEventLoop() {
		return errKeepOutsideOnData
	}
	if c.handedOver {
		return errKeepHandedOver
	}
	c.keepSet = true
	if len(p) > c.w.o.keepLimit {
		c.in = c.in[:0]
		return engine.ErrKeepLimit
	}
	c.in = append(c.in[:0], p...) // p may lie inside c.in: append moves it
	return nil
}

// SetHandler hands the established connection to h, as
// engine.Conn.SetHandler does a plain one (an HTTPS connection hijacked
// into a net.Conn, a protocol upgrade): h.OnOpen runs at once, every later
// callback goes to h, and pending, plaintext the old handler received and
// did not consume, reaches h.OnData first, at the end of the loop's
// iteration or with the next records. Optional handler interfaces are h's
// from then on; a peer's end the old handler already heard of is told to h
// again, after pending. Called from the old handler's OnData, that handler
// gets no more bytes and can keep none. It may be called only on the
// loop; elsewhere, or once the connection is closing, it returns an error
// and changes nothing.
func (c *Conn) SetHandler(h Handler, pending []byte) error {
	switch {
	case !c.ec.Loop().InEventLoop():
		return errSetHandlerOffLoop
	case c.st != stOpen:
		return ErrConnClosed
	case len(pending) > c.w.o.keepLimit:
		return engine.ErrKeepLimit
	}
	c.hs = newHandlers(h)
	c.in = append([]byte(nil), pending...) // pending may lie in c.in
	if c.delivering {
		c.keepSet, c.handedOver = true, true
	}
	c.readDone = false
	h.OnOpen(c)
	_ = c.ec.Loop().ExecuteAfterIteration(&c.resume)
	return nil
}

// Reading reports whether the connection is open, not paused (PauseRead)
// and still this handler's (not given away by SetHandler in this OnData),
// as engine.Conn.Reading does: a handler that splits frames stops where it
// turns false and keeps the rest (Keep), which ResumeRead delivers again.
// Loop only: off the loop it reports false.
func (c *Conn) Reading() bool {
	return c.ec.Loop().InEventLoop() && c.st == stOpen && !c.paused && !c.handedOver
}

// Kept returns the plaintext kept and not yet delivered again (in OnClose:
// the unfinished frame the peer left). Loop only.
func (c *Conn) Kept() []byte {
	if !c.ec.Loop().InEventLoop() {
		return nil
	}
	return c.in
}

// Engine returns the engine connection the TLS connection runs on: its
// loop, addresses, watermarks and Buffered. Writing to it would send
// plaintext into the TLS stream, and its value (SetValue) is this
// package's: use the Conn's.
func (c *Conn) Engine() *engine.Conn { return c.ec }

// ConnectionState returns the handshake's outcome: version, cipher suite,
// NegotiatedProtocol (ALPN), ServerName (SNI), PeerCertificates,
// DidResume. Safe from any goroutine.
func (c *Conn) ConnectionState() tls.ConnectionState { return c.tc.ConnectionState() }

// NegotiatedProtocol is ConnectionState().NegotiatedProtocol without
// copying the state.
func (c *Conn) NegotiatedProtocol() string { return c.proto }

// LocalAddr and RemoteAddr are the engine connection's.
func (c *Conn) LocalAddr() net.Addr  { return c.ec.LocalAddr() }
func (c *Conn) RemoteAddr() net.Addr { return c.ec.RemoteAddr() }

// SetValue attaches a user value to the connection; nil removes it. Safe
// from any goroutine.
func (c *Conn) SetValue(v any) {
	if v == nil {
		c.value.Store(nil)
		return
	}
	c.value.Store(&valueBox{v})
}

// Value returns the user value, nil if none was set.
func (c *Conn) Value() any {
	if b := c.value.Load(); b != nil {
		return b.v
	}
	return nil
}

// Writable reports whether the ciphertext waiting for the socket is under
// the engine connection's high watermark.
func (c *Conn) Writable() bool { return c.ec.Writable() }

// Write encrypts p into records and queues them on the engine connection
// (engine.Conn.Write: flushed once per iteration; never blocks). Off the
// loop it is AsyncWrite.
func (c *Conn) Write(p []byte) (int, error) {
	if !c.ec.Loop().InEventLoop() {
		if err := c.AsyncWrite(p); err != nil {
			return 0, err
		}
		return len(p), nil
	}
	return c.write(p)
}

func (c *Conn) write(p []byte) (int, error) {
	if c.st != stOpen {
		return 0, ErrConnClosed
	}
	return c.tc.Write(p)
}

// Close sends close_notify, flushes what was written and closes the
// connection; OnClose follows with engine.ErrConnClosed.
func (c *Conn) Close() error { return c.CloseWithError(nil) }

// CloseWithError closes as Close does, and OnClose receives err.
func (c *Conn) CloseWithError(err error) error {
	if err == nil {
		err = ErrConnClosed
	}
	if c.ec.Loop().InEventLoop() {
		c.closeWith(err)
		return nil
	}
	c.ctl.err.CompareAndSwap(nil, &err)
	return c.ctl.request(reqClose)
}

// CloseWrite half-closes: it sends close_notify after what was written
// and shuts down the sending side (engine.Conn.CloseWrite); reading goes
// on, so a server can finish reading a peer it has answered. Later writes
// fail. Once the peer closes too, OnClose follows.
func (c *Conn) CloseWrite() error {
	if c.ec.Loop().InEventLoop() {
		c.closeWrite()
		return nil
	}
	return c.ctl.request(reqCloseWrite)
}

func (c *Conn) closeWrite() {
	if c.st != stOpen {
		return
	}
	c.async.flush() // what AsyncWrite accepted goes before close_notify
	c.async.close(ErrConnClosed)
	_ = c.tc.CloseWrite()
	_ = c.ec.CloseWrite()
}

// Abort closes at once, without close_notify, dropping unsent bytes.
func (c *Conn) Abort() error {
	if c.ec.Loop().InEventLoop() {
		c.abortWith(engine.ErrAborted)
		return nil
	}
	return c.ctl.request(reqAbort)
}

// closeWith sends close_notify (once the handshake is done) and closes the
// engine connection gracefully (on the loop).
func (c *Conn) closeWith(err error) {
	if c.st >= stClosing {
		return
	}
	c.async.flush() // what AsyncWrite accepted goes before close_notify
	if c.st == stOpen {
		_ = c.tc.CloseWrite()
	}
	c.st = stClosing
	c.async.close(ErrConnClosed)
	_ = c.ec.CloseWithError(err)
}

// abortWith ends the connection with err: after a TLS error (crypto/tls
// has queued its alert) or an Abort.
func (c *Conn) abortWith(err error) {
	if c.st >= stClosing {
		if c.st == stClosing && errors.Is(err, engine.ErrAborted) {
			_ = c.ec.Abort()
		}
		return
	}
	c.st = stClosing
	c.async.close(ErrConnClosed)
	if errors.Is(err, engine.ErrAborted) {
		_ = c.ec.Abort()
		return
	}
	_ = c.ec.CloseWithError(err) // flushes the alert crypto/tls queued
}

// PauseRead stops reading: no OnData until ResumeRead; records already
// received wait, still encrypted.
func (c *Conn) PauseRead() {
	if !c.ec.Loop().InEventLoop() {
		_ = c.ctl.request(reqPause)
		return
	}
	if !c.paused {
		c.paused = true
		c.ec.PauseRead()
	}
}

// ResumeRead starts reading again; records (and kept bytes) already
// received are delivered at the end of the loop's iteration.
func (c *Conn) ResumeRead() {
	if !c.ec.Loop().InEventLoop() {
		_ = c.ctl.request(reqResume)
		return
	}
	if c.paused {
		c.paused = false
		c.ec.ResumeRead()
		_ = c.ec.Loop().ExecuteAfterIteration(&c.resume)
	}
}

// resumeTask delivers what waited while reading was paused.
type resumeTask struct{ c *Conn }

func (t *resumeTask) Run() {
	c := t.c
	if c.st != stOpen || c.paused {
		return
	}
	defer c.recoverTask("OnData")
	if len(c.in) > 0 {
		c.deliver(nil)
	}
	c.readRecords()
	if c.finSeen {
		c.peerDone()
	}
	c.tr.stash()
}

// recoverTask is deferred around the callbacks this package calls from a
// loop task (the engine recovers those it calls): a panic ends the
// connection, as it would there, with an error wrapping a
// *tasks.PanicError.
func (c *Conn) recoverTask(what string) {
	if p := recover(); p != nil {
		if c.st < stClosing {
			c.st = stClosing
		}
		c.async.close(ErrConnClosed)
		_ = c.ec.CloseWithError(fmt.Errorf("looptls: %s: %w", what, taskq.NewPanicError(p)))
	}
}

// truncated tells, once the peer has closed the TCP connection, whether it
// did so at a record boundary (io.EOF) or inside a record
// (io.ErrUnexpectedEOF): crypto/tls, given the end of the stream, judges
// what it holds.
func (c *Conn) truncated() error {
	c.tr.closeWith(io.EOF)
	var one [1]byte
	if _, err := c.tc.Read(one[:]); err == io.ErrUnexpectedEOF {
		return err
	}
	return io.EOF
}
