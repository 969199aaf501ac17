package engine

import (
	"errors"
	"fmt"
	"io"
	"net"
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/ringloop/ringloop/internal/driver"
	"github.com/ringloop/ringloop/timers"
)

// Handler receives a connection's events. Every callback of a connection runs
// on its loop, one at a time, so a handler needs no locks for per-connection
// state.
type Handler interface {
	// OnOpen is called once the connection is established.
	OnOpen(c *Conn)
	// OnData is called with received bytes, after those an earlier call
	// kept with c.Keep; b is valid only during the call. A handler parses
	// what is whole, keeps the unfinished rest with c.Keep (it is copied)
	// and returns; bytes it neither uses nor keeps are consumed.
	OnData(c *Conn, b []byte)
	// OnClose is called once, after the fd is closed, with why: io.EOF (the
	// peer closed), io.ErrUnexpectedEOF (the peer closed while the handler
	// kept an unfinished frame, which c.Kept still returns), an errno such
	// as ECONNRESET, ErrIdleTimeout, ErrShutdown (the loop shut down),
	// ErrConnClosed (local Close), the error given to CloseWithError,
	// ErrAborted, ErrCloseTimeout (Close could not flush in time) or
	// ErrPanicked (a callback of the connection panicked).
	//
	// A panic in any callback of a connection ends that connection only: it
	// is closed, unsent bytes dropped, and OnClose receives an error wrapping
	// ErrPanicked; the loop and its other connections go on.
	OnClose(c *Conn, err error)
}

// WritabilityHandler is an optional Handler extension: it learns when the
// bytes waiting to be sent cross the high watermark (writable false) and fall
// back under the low one (writable true), Netty's channelWritabilityChanged.
type WritabilityHandler interface {
	OnWritabilityChanged(c *Conn, writable bool)
}

// HalfCloseHandler is an optional Handler extension (Netty's
// ALLOW_HALF_CLOSURE): when the peer shuts down its write side, OnReadClosed
// is called instead of closing the connection, which stays open for writing
// until Close or CloseWrite. Once both directions are shut (the peer's FIN
// seen and CloseWrite's FIN sent, in either order) the connection is closed,
// after its output drained, and OnClose follows with io.EOF.
type HalfCloseHandler interface {
	OnReadClosed(c *Conn)
}

// ShutdownHandler is an optional Handler extension: OnShutdown is called on
// the loop, once, for each open connection when its loop's shutdown begins
// (Shutdown, Close, ShutdownGracefully), before the connection is closed:
// the protocol's last word (a goodbye line, WebSocket's 1001, TLS's
// close_notify). What it writes is flushed before the fd is closed, and
// OnClose follows with ErrShutdown; it cannot keep the connection open. The
// flush is bounded (see the package doc, Lifecycle): past the bound the
// connection is reset and OnClose gets ErrCloseTimeout. Without it a
// connection is closed as it stands.
type ShutdownHandler interface {
	OnShutdown(c *Conn)
}

// Connection errors; all closed-connection errors match net.ErrClosed.
var (
	ErrConnClosed  = fmt.Errorf("engine: connection closed: %w", net.ErrClosed)
	ErrAborted     = fmt.Errorf("engine: connection aborted: %w", net.ErrClosed)
	ErrWriteClosed = fmt.Errorf("engine: write side closed: %w", net.ErrClosed)
	// ErrCloseTimeout: a graceful close could not send what was written
	// within the close timeout (a peer that does not read), so the
	// connection was aborted and the unsent bytes dropped.
	ErrCloseTimeout = fmt.Errorf("engine: close timed out with bytes unsent: %w", ErrAborted)
)

type connState uint8

const (
	connConnecting connState = iota
	connOpen
	connClosing // flushing, then close
	connClosed  // CloseFD issued
)

// Conn is a TCP or Unix stream connection served by one loop.
//
// Every method is safe from any goroutine; each says what it does when
// called off the connection's loop (from a goroutine other than its handler
// callbacks and the loop's tasks). Write there behaves as AsyncWrite; Close,
// Abort, CloseWrite, PauseRead and ResumeRead hand themselves to the loop on
// its control ring, which a bounded task ring (WithMaxPendingTasks) cannot
// refuse; Buffered reports the loop's last published count. The checks cost
// a goroutine-identity compare (InEventLoop), no system call.
type Conn struct {
	loop      *Loop
	fd        int
	h         Handler
	wh        WritabilityHandler
	cfg       *connConfig
	keepLimit int // WithKeepLimit's, or SetKeepLimit's
	idx       uint32
	gen       uint32
	st        connState

	flags  connFlags // the loop's view of the connection, one word
	trimAt int32     // index in the loop's trim list while flagTrimListed

	out     []byte // written this iteration, not yet handed to the driver
	sending []byte // handed to the driver, until its completion
	in      []byte // bytes kept for the next delivery (Keep)

	writable atomic.Bool // read from any goroutine (Writable)
	async    asyncWriter // AsyncWrite's side, shared with other goroutines

	closeErr error

	idle      timers.Timer
	idleTask  idleTask
	lastRead  int64
	lastWr    int64
	idleFired [3]int64 // when each idle timeout last fired

	dialer *dialer // while connecting (DialAsync)
	value  atomic.Pointer[valueBox]
	laddr  net.Addr // set before the connection is published (fillAddrs)
	raddr  net.Addr
	ctl    connCtl // requests from other goroutines
}

// connFlags is a connection's state besides connState, one bit each, read
// and written only on its loop (as the epoll driver keeps one word per fd):
// one field to snapshot in a debugger and no padding between a dozen bools.
type connFlags uint32

const (
	flagInFlight   connFlags = 1 << iota // a send op is armed
	flagQueued                           // in the loop's flush list
	flagHalfShut                         // CloseWrite asked
	flagWrShut                           // shutdown(SHUT_WR) done
	flagRecvArmed                        // a recv op is armed (its final completion not seen)
	flagReadPaused                       // PauseRead in effect
	flagReadEOF                          // the peer shut down its write side
	flagConnArmed                        // a connect op is armed
	flagCloseDone                        // CloseFD completed
	flagDelivering                       // in OnData: Keep is allowed
	flagKeepSet                          // Keep was called in this OnData
	flagRedeliver                        // in the loop's redeliver list
	flagEOFNotice                        // SetHandler's h is owed the peer's FIN
	flagHandedOver                       // SetHandler ran in this OnData: the old handler stops
	flagWrote                            // wrote since the last trim sweep (sendtrim.go)
	flagTrimListed                       // in the loop's trim list
	flagDropBufs                         // ReleaseSendBuffers: let the outbound buffers go once drained
)

func (c *Conn) has(f connFlags) bool { return c.flags&f != 0 }
func (c *Conn) set(f connFlags)      { c.flags |= f }
func (c *Conn) clear(f connFlags)    { c.flags &^= f }

// valueBox holds a connection's user value (SetValue).
type valueBox struct{ v any }

func newConn(l *Loop, fd int, h Handler, cfg *connConfig) *Conn {
	c := &Conn{loop: l, fd: fd, h: h, cfg: cfg, keepLimit: cfg.keepLimit}
	c.writable.Store(true)
	c.async.drain.c = c
	c.ctl.c = c
	c.wh, _ = h.(WritabilityHandler)
	c.idleTask.c = c
	c.idle.Init(&c.idleTask)
	c.idx, c.gen = l.reg.add(c)
	return c
}

func (c *Conn) tag(k opKind) driver.Tag { return makeTag(c.idx, c.gen, k) }

// open starts serving an established connection: OnOpen, reading, timers.
func (c *Conn) open() {
	c.fillAddrs()
	c.st = connOpen
	t := now()
	c.lastRead, c.lastWr = t, t
	c.armIdle(t)
	c.observeOpened()
	c.onOpen()
	if c.st == connOpen && !c.has(flagReadPaused) {
		c.armRecv()
	}
}

func (c *Conn) armRecv() {
	if c.has(flagRecvArmed) || c.has(flagReadEOF) {
		return
	}
	c.set(flagRecvArmed)
	c.loop.drv.Recv(c.fd, c.tag(opRecv))
}

// Loop returns the loop that serves the connection.
func (c *Conn) Loop() *Loop { return c.loop }

// FD returns the connection's file descriptor; do not close it.
func (c *Conn) FD() int { return c.fd }

// SetValue attaches a user value to the connection; nil removes it. Safe
// from any goroutine; the value is published atomically, so another
// goroutine's Value sees it or the previous one.
func (c *Conn) SetValue(v any) {
	if v == nil {
		c.value.Store(nil)
		return
	}
	c.value.Store(&valueBox{v})
}

// Value returns the user value, nil if none was set. Safe from any
// goroutine.
func (c *Conn) Value() any {
	if b := c.value.Load(); b != nil {
		return b.v
	}
	return nil
}

// fillAddrs reads the socket's addresses once, on the loop, before the
// connection is handed to anyone (OnOpen, a dial's future): from then on
// they are read-only, so LocalAddr and RemoteAddr need no synchronisation,
// and they stay right after the fd is closed (and its number reused).
//
// It asks package syscall, not x/sys/unix: for an AF_INET or AF_INET6
// address the latter costs a getsockopt more each (it probes for L2TP), two
// system calls more per accepted connection.
func (c *Conn) fillAddrs() {
	if c.laddr == nil {
		if sa, err := syscall.Getsockname(c.fd); err == nil {
			c.laddr = stdSockaddrToAddr(sa)
		}
	}
	if c.raddr == nil {
		if sa, err := syscall.Getpeername(c.fd); err == nil {
			c.raddr = stdSockaddrToAddr(sa)
		}
	}
}

// LocalAddr returns the local address, read when the connection opened (nil
// if the socket could not tell). Safe from any goroutine.
func (c *Conn) LocalAddr() net.Addr { return c.laddr }

// RemoteAddr returns the peer's address, read when the connection opened
// (nil if the peer had already gone). Safe from any goroutine.
func (c *Conn) RemoteAddr() net.Addr { return c.raddr }

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

func (c *Conn) complete(k opKind, comp *driver.Completion) {
	switch k {
	case opRecv:
		c.onRecv(comp)
	case opSend:
		c.onSend(comp)
	case opConnect:
		c.onConnect(comp)
	case opClose:
		c.set(flagCloseDone)
		c.maybeRelease()
	}
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
			c.deliver(comp.Data)
		}
		if !comp.More && c.st == connOpen && !c.has(flagReadPaused) {
			c.armRecv()
		}
	case comp.Res == 0:
		c.peerEOF()
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

// afterDrain runs when nothing is left to send: a pending half-close or close
// happens now. A half-closed connection whose peer has also shut down its
// side is closed: both directions are done.
func (c *Conn) afterDrain() {
	if c.has(flagHalfShut) && !c.has(flagWrShut) && c.st == connOpen {
		c.set(flagWrShut)
		_ = unix.Shutdown(c.fd, unix.SHUT_WR)
		if c.has(flagReadEOF) {
			c.closeWith(io.EOF)
			return
		}
	}
	if c.st == connClosing {
		c.finish()
	}
}

// Close flushes what was written and then closes the connection; OnClose
// follows with ErrConnClosed. Off the loop it hands itself to the loop's
// control ring and returns at once; it returns ErrShutdown only once the
// loop has shut down, which closed the connection itself.
func (c *Conn) Close() error {
	if c.loop.InEventLoop() {
		c.closeWith(ErrConnClosed)
		return nil
	}
	return c.ctl.request(reqClose)
}

// CloseWithError closes the connection as Close does, and OnClose receives
// err (ErrConnClosed when err is nil): a protocol handler ending a peer that
// sent something it cannot accept says why, as io.PipeWriter's
// CloseWithError does. Off the loop it hands itself to the loop, as Close;
// the first error asked wins.
func (c *Conn) CloseWithError(err error) error {
	if err == nil {
		err = ErrConnClosed
	}
	if c.loop.InEventLoop() {
		c.closeWith(err)
		return nil
	}
	c.ctl.err.CompareAndSwap(nil, &err)
	return c.ctl.request(reqClose)
}

// Reading reports whether the connection is open, not paused (PauseRead)
// and still this handler's (not given away by SetHandler in this OnData): a
// handler that splits frames stops where it turns false and keeps the rest,
// which ResumeRead delivers again. Loop only: off the loop
// it reports false.
func (c *Conn) Reading() bool {
	return c.loop.InEventLoop() && c.st == connOpen && !c.has(flagReadPaused|flagHandedOver)
}

// Abort closes the connection now, dropping unsent bytes, and resets it (the
// peer sees ECONNRESET). Off the loop it hands itself to the loop, as Close.
func (c *Conn) Abort() error {
	if c.loop.InEventLoop() {
		c.abortWith(ErrAborted)
		return nil
	}
	return c.ctl.request(reqAbort)
}

// CloseWrite half-closes: once the written bytes are sent the peer reads EOF;
// reading goes on. Once the peer has shut down its side too (a
// HalfCloseHandler's OnReadClosed), the connection is closed and OnClose
// follows with io.EOF. Off the loop it hands itself to the loop, as Close.
func (c *Conn) CloseWrite() error {
	if c.loop.InEventLoop() {
		c.closeWrite()
		return nil
	}
	return c.ctl.request(reqCloseWrite)
}

func (c *Conn) closeWrite() {
	if c.st != connOpen || c.has(flagHalfShut) {
		return
	}
	c.closeAsync(ErrWriteClosed, true)
	c.set(flagHalfShut)
	if !c.has(flagInFlight) && len(c.out) == 0 {
		c.afterDrain()
	}
}

// PauseRead stops reading (Netty's autoRead off) so a fast peer cannot grow
// memory; bytes already received still arrive. Off the loop it hands itself
// to the loop, where the latest of PauseRead and ResumeRead called off the
// loop wins.
func (c *Conn) PauseRead() {
	if !c.loop.InEventLoop() {
		_ = c.ctl.request(reqPause) // refused: the loop shut down, closing c
		return
	}
	c.pauseRead()
}

func (c *Conn) pauseRead() {
	if c.has(flagReadPaused) {
		return
	}
	c.set(flagReadPaused)
	if c.has(flagRecvArmed) {
		c.loop.drv.Cancel(c.fd, c.tag(opRecv))
	}
}

// ResumeRead starts reading again. Off the loop it hands itself to the loop,
// as PauseRead.
func (c *Conn) ResumeRead() {
	if !c.loop.InEventLoop() {
		_ = c.ctl.request(reqResume) // refused: the loop shut down, closing c
		return
	}
	c.resumeRead()
}

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

// Requests from other goroutines, collected in connCtl.bits.
const (
	reqClose uint32 = 1 << iota
	reqAbort
	reqCloseWrite
	reqPause
	reqResume
	reqQueued // the connCtl task is on the control ring
)

// connCtl carries a connection's requests from other goroutines to its loop:
// one pre-built task, on the control ring at most once at a time, and a word
// of request bits, so that any number of calls costs no allocation and at
// most one ring entry.
type connCtl struct {
	c    *Conn
	bits atomic.Uint32
	err  atomic.Pointer[error] // CloseWithError's, for reqClose
}

// request records r and queues the task unless it is queued already.
func (t *connCtl) request(r uint32) error {
	for {
		old := t.bits.Load()
		nw := old | r | reqQueued
		switch {
		case r == reqPause: // the latest of pause and resume wins
			nw &^= reqResume
		case r == reqResume:
			nw &^= reqPause
		case r == reqClose && old&reqAbort != 0,
			r == reqCloseWrite && old&(reqAbort|reqClose) != 0:
			nw = old | reqQueued // after an abort or close it would be a no-op
		}
		if !t.bits.CompareAndSwap(old, nw) {
			continue
		}
		if old&reqQueued != 0 {
			return nil
		}
		// Refused only once the loop has shut down: its shutdown closes
		// the connection.
		return t.c.loop.control(t)
	}
}

// Run applies the requests on the loop.
func (t *connCtl) Run() {
	c, r := t.c, t.bits.Swap(0)
	switch {
	case r&reqResume != 0:
		c.resumeRead()
	case r&reqPause != 0:
		c.pauseRead()
	}
	// In the order they can have been asked (request drops those that
	// would follow an abort or a close): a close then an abort ends a
	// flush that is under way, as two separate calls on the loop would.
	if r&reqCloseWrite != 0 {
		c.closeWrite()
	}
	if r&reqClose != 0 {
		err := ErrConnClosed
		if p := t.err.Load(); p != nil {
			err = *p
		}
		c.closeWith(err)
	}
	if r&reqAbort != 0 {
		c.abortWith(ErrAborted)
	}
}

// closeWith starts a graceful close: stop reading, flush, then close.
func (c *Conn) closeWith(err error) {
	if c.st >= connClosing {
		return
	}
	if c.st == connConnecting {
		c.abortWith(err)
		return
	}
	c.closeAsync(ErrConnClosed, true)
	c.st = connClosing
	c.closeErr = err
	if c.has(flagRecvArmed) {
		c.loop.drv.Cancel(c.fd, c.tag(opRecv))
	}
	if !c.has(flagInFlight) && len(c.out) == 0 {
		c.finish()
		return
	}
	// The close timeout bounds the flush (a peer that never reads); the
	// idle timer is free, idle timeouts do not apply to a closing
	// connection.
	c.loop.heap.Start(&c.idle, now()+int64(c.cfg.closeTimeout))
}

// abortWith closes at once, dropping unsent bytes; err replaces the reason
// of a graceful close under way, since what it would have flushed is lost.
func (c *Conn) abortWith(err error) {
	if c.st == connClosed {
		return
	}
	c.closeAsync(ErrConnClosed, false)
	c.closeErr = err
	if errors.Is(err, ErrAborted) {
		_ = unix.SetsockoptLinger(c.fd, unix.SOL_SOCKET, unix.SO_LINGER, &unix.Linger{Onoff: 1, Linger: 0})
	}
	c.out = c.out[:0]
	c.finish()
}

// finish cancels what is armed and closes the fd through the driver; the
// connection is released once every op has reported its end.
func (c *Conn) finish() {
	if c.st == connClosed {
		return
	}
	c.st = connClosed
	c.closeAsync(ErrConnClosed, false)
	c.loop.heap.Stop(&c.idle)
	if c.has(flagRecvArmed) {
		c.loop.drv.Cancel(c.fd, c.tag(opRecv))
	}
	if c.has(flagInFlight) {
		c.loop.drv.Cancel(c.fd, c.tag(opSend))
	}
	if c.has(flagConnArmed) {
		c.loop.drv.Cancel(c.fd, c.tag(opConnect))
	}
	c.loop.drv.CloseFD(c.fd, c.tag(opClose))
}

// maybeRelease frees the slot and calls OnClose once everything has ended.
func (c *Conn) maybeRelease() {
	if c.st != connClosed || !c.has(flagCloseDone) || c.has(flagRecvArmed) || c.has(flagInFlight) || c.has(flagConnArmed) {
		return
	}
	c.loop.reg.remove(c.idx, c.gen)
	c.unlistTrim()
	c.loop.bufs.put(c.out)
	c.loop.bufs.put(c.sending)
	c.out, c.sending = nil, nil
	c.publishBuffered()
	if d := c.dialer; d != nil {
		c.dialer = nil
		d.ended(c.closeErr)
		return
	}
	defer c.observeClosed()
	c.onClose()
	c.releaseIn()
}

// shutdown closes the connection as its loop stops: gracefully, after a
// ShutdownHandler's OnShutdown, or at once with the cause when the loop's
// own code panicked (its state is not to be trusted with a flush).
func (c *Conn) shutdown() {
	if err := c.loop.fault; err != nil {
		c.abortWith(err)
		return
	}
	if sh, ok := c.h.(ShutdownHandler); ok && c.st == connOpen {
		c.onShutdown(sh)
	}
	c.closeWith(ErrShutdown)
}

func (c *Conn) abandon() {
	if c.st != connClosed {
		_ = unix.Close(c.fd) // never handed to CloseFD; one issued is not repeated
	}
	if c.closeErr == nil {
		c.closeErr = c.loop.closeCause()
	}
	c.st = connClosed
	c.set(flagCloseDone)
	c.clear(flagRecvArmed | flagInFlight | flagConnArmed)
	c.maybeRelease()
}
