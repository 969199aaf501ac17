package engine

import (
	"net"
	"sync/atomic"
	"syscall"

	"github.com/ringloop/ringloop/internal/driver"
	"github.com/ringloop/ringloop/internal/timers"
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
	keepLimit int // BufferLimits.Keep, or SetKeepLimit's
	idx       uint32
	gen       uint32
	st        connState

	flags  connFlags // the loop's view of the connection, one word
	trimAt int32     // index in the loop's trim list while flagTrimListed

	out     []byte // written this iteration, not yet handed to the driver
	sending []byte // handed to the driver, until its completion
	in      []byte // bytes kept for the next delivery (Keep)

	tr    Transport // nil for a plain connection (transport.go)
	plain []byte    // with a transport: written, not yet encoded

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
	flagDropBufs                         // releaseWhenSent: let the outbound buffers go once drained
	flagHeld                             // the transport holds OnOpen back (a handshake)
	flagInputEnd                         // no more input is read: the socket's FIN reached the transport, or it ended
	flagDecodeEnd                        // the transport's Decode reported its end: it is not called again
)

func (c *Conn) has(f connFlags) bool { return c.flags&f != 0 }
func (c *Conn) set(f connFlags)      { c.flags |= f }
func (c *Conn) clear(f connFlags)    { c.flags &^= f }

// valueBox holds a connection's user value (SetValue).
type valueBox struct{ v any }

func newConn(l *Loop, fd int, h Handler, cfg *connConfig) *Conn {
	c := &Conn{loop: l, fd: fd, h: h, cfg: cfg, keepLimit: cfg.keepLimit}
	if lh, ok := h.(*layered); ok {
		c.h = lh.h
		c.tr = lh.newTransport(Wire{c})
	}
	c.writable.Store(true)
	c.async.drain.c = c
	c.ctl.c = c
	c.wh, _ = c.h.(WritabilityHandler)
	c.idleTask.c = c
	c.idle.Init(&c.idleTask)
	c.idx, c.gen = l.reg.add(c)
	return c
}

func (c *Conn) tag(k driver.OpKind) driver.Tag { return makeTag(c.idx, c.gen, k) }

// open starts serving an established connection: OnOpen, reading, timers.
func (c *Conn) open() {
	c.fillAddrs()
	c.st = connOpen
	t := now()
	c.lastRead, c.lastWr = t, t
	c.armIdle(t)
	c.observeOpened()
	if c.tr == nil {
		c.onOpen()
	} else {
		c.set(flagHeld) // until the transport says otherwise
		if c.tr.Open() {
			c.clear(flagHeld)
			c.onOpen()
		}
	}
	if c.st == connOpen && !c.has(flagReadPaused) {
		c.armRecv()
	}
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

func (c *Conn) complete(k driver.OpKind, comp *driver.Completion) {
	switch k {
	case driver.OpRecv:
		c.onRecv(comp)
	case driver.OpSend:
		c.onSend(comp)
	case driver.OpConnect:
		c.onConnect(comp)
	case driver.OpClose:
		c.set(flagCloseDone)
		c.maybeRelease()
	}
}
