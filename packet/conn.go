package packet

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/internal/driver"
	"github.com/ringloop/ringloop/internal/loopapi"
	"github.com/ringloop/ringloop/internal/taskq"
)

// Handler receives a datagram socket's events, on its loop, one at a
// time (see the package doc).
type Handler interface {
	// OnPacket is called for each datagram received: b is its payload,
	// valid during the call only (copy what you keep), and from its source.
	// On a unixgram socket from is the zero AddrPort: SourceAddr returns
	// the sender's path, and Reply answers it.
	OnPacket(pc *Conn, b []byte, from netip.AddrPort)
	// OnPacketError reports what the socket survives: a datagram lost, or
	// an error the kernel queued. Each is a *net.OpError: Op "read" for a
	// datagram over Options.MaxSize (its Err wraps ErrTruncated;
	// during the call SourceAddr and Reply refer to that datagram) and for
	// ICMP errors on a connected socket (syscall.ECONNREFUSED...), Op
	// "write" for a queued datagram the kernel refused (it is dropped).
	OnPacketError(pc *Conn, err error)
	// OnPacketClose is the last call, once the socket is closed: err is nil
	// after Close, engine.ErrShutdown after the loop's shutdown, an error wrapping
	// a *tasks.PanicError after a callback panicked, else why the socket
	// failed.
	OnPacketClose(pc *Conn, err error)
}

// ErrTruncated is in the error OnPacketError reports for a datagram longer
// than Options.MaxSize: it is not delivered cut, it is dropped.
var ErrTruncated = errors.New("packet: datagram truncated")

// errPacketClosed is what writes to a closed datagram socket return.
var errPacketClosed = fmt.Errorf("packet: datagram socket closed: %w", net.ErrClosed)

// Conn is a datagram socket (UDP or unixgram) served by one loop:
// the loop receives in batches and calls the handler for each datagram,
// and sends what WriteTo queued once per iteration, in batches. Its fields
// are the loop's, except the async queue and the atomics.
type Conn struct {
	loop      *engine.Loop
	in        loopapi.Internals
	drv       driver.Driver
	counts    *loopapi.PacketCounts // the loop's, which its Metrics publish
	h         Handler
	fd        int
	family    int
	network   string
	laddr     net.Addr
	raddr     net.Addr // Dial's peer
	unlink    string   // the unixgram path Listen bound, removed at close
	connected bool
	gso       bool // sends coalesce runs to one peer (offload.go)
	cfg       packetConfig
	limit     int // bytes held unsent (queued on the loop and by other goroutines)
	io        datagramIO
	rs        *ringSend // ringIO's send chain
	pl        *packetLoop
	idx, gen  uint32

	st         packetState
	closeErr   error
	poll       uint32 // events of the live poll op
	polling    bool   // a poll op is live (until its final completion)
	cancelling bool   // that poll is being cancelled to change its events
	paused     bool   // PauseRead
	readQueued bool   // a read continuation is queued
	delivering bool   // a datagram is being delivered: curName, curNameLen and curCtrl are its
	curName    *unix.RawSockaddrAny
	curNameLen uint32
	curCtrl    []byte

	// ringIO: the RECVMSG op is live (until its final completion), and
	// being cancelled
	recvArmed, recvCancelling bool
	recvCtrl                  bool           // the armed RECVMSG has room for control messages
	ctrlWait                  []chan<- error // Control calls waiting for the cancelled RECVMSG to end

	out         packetQueue
	flushQueued bool // a flush is queued on the control ring
	blocked     bool // the kernel's send buffer was full: waiting for POLLOUT
	idleOut     int  // writability reports in a row that sent nothing
	retrying    bool // a timed send retry is pending (instead of POLLOUT)
	sendErrs    []error

	lastName nameCache // WriteTo's last destination, encoded (loop-only)

	// direct: writes off the loop may send at once (direct.go); stored
	// under async.Mu, by the loop and by a writer that queues.
	direct    atomic.Bool
	directOut atomic.Uint64 // datagrams sent directly, not yet in counts
	// offLoop: a write came from off the loop; until then direct sends
	// are not allowed, sparing a loop that writes only itself the mutex
	// each pass
	offLoop atomic.Bool

	outBytes    atomic.Int64 // out.bytes, published for the async bound
	closeCalled atomic.Bool
	pauseReq    atomic.Int32 // 1 pause, 2 resume: the latest off-loop request
	pauseQueued atomic.Bool
	async       packetAsync

	flushT, readT, drainT, closeT, pauseT, retryT packetTask
}

type packetState uint8

const (
	packetOpen    packetState = iota
	packetClosing             // cancelling the poll
	packetCloseFD             // CloseFD submitted
	packetClosed
)

// packetTask runs one of a socket's steps on its loop; each socket keeps its
// own, so queueing one allocates nothing.
type packetTask struct {
	pc *Conn
	fn func(*Conn)
}

func (t *packetTask) Run() { t.fn(t.pc) }

// Listen opens a datagram socket bound to addr on loop l and serves it
// with h: network is "udp", "udp4", "udp6" or "unixgram" (a path, or
// "@name" for Linux's abstract namespace; a path it bound is removed at
// close). "udp" on a wildcard address serves IPv4 and IPv6. o nil means
// the defaults. Safe from any goroutine; a host name is resolved on the
// caller's. Errors are *net.OpError with Op "listen", as
// net.ListenPacket's.
func Listen(l *engine.Loop, network, addr string, h Handler, o *Options) (*Conn, error) {
	return open(l, "listen", network, addr, h, o)
}

// Dial opens a datagram socket connected to raddr on loop l: it
// receives only from raddr, WriteTo with the zero AddrPort sends there, and
// ICMP errors about what it sent reach OnPacketError (a closed port:
// syscall.ECONNREFUSED). A unixgram socket is bound to an autobound
// abstract name, so the peer can answer it. Otherwise as Listen;
// errors have Op "dial".
func Dial(l *engine.Loop, network, raddr string, h Handler, o *Options) (*Conn, error) {
	return open(l, "dial", network, raddr, h, o)
}

var errNilHandler = errors.New("packet: nil handler")

func open(l *engine.Loop, op, network, addr string, h Handler, o *Options) (*Conn, error) {
	if h == nil {
		return nil, errNilHandler
	}
	cfg, err := o.config()
	if err != nil {
		return nil, opError(op, network, nil, err)
	}
	in, err := loopapi.Open(l)
	if err != nil {
		return nil, opError(op, network, nil, err)
	}
	family, sa, err := resolvePacket(network, addr)
	if err != nil {
		return nil, opError(op, network, nil, err)
	}
	fail := func(err error) (*Conn, error) {
		return nil, opError(op, network, packetAddr(sa, network), err)
	}
	fd, err := unix.Socket(family, unix.SOCK_DGRAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fail(os.NewSyscallError("socket", err))
	}
	pc := &Conn{loop: l, in: in, drv: in.Driver(), counts: in.Packets(), h: h, fd: fd, family: family, network: network,
		cfg: cfg, limit: cfg.asyncLimit, gso: packetGSO && family != unix.AF_UNIX}
	if err := pc.setup(op, sa); err != nil {
		unix.Close(fd)
		return fail(err)
	}
	pc.enableGRO()
	// Keep the send buffers a burst grew, up to the write limit (and
	// append's growth past it): see packetQueue.maxIdle.
	pc.out.maxIdle = pc.limit + pc.limit/2
	pc.async.MaxIdle = pc.out.maxIdle
	if lsa, err := unix.Getsockname(fd); err == nil {
		pc.laddr = packetAddr(lsa, network)
	}
	pc.flushT = packetTask{pc, (*Conn).flushTask}
	pc.readT = packetTask{pc, (*Conn).readTask}
	pc.drainT = packetTask{pc, (*Conn).drainAsync}
	pc.closeT = packetTask{pc, func(pc *Conn) { pc.closeWith(nil) }}
	pc.pauseT = packetTask{pc, (*Conn).pauseTask}
	pc.retryT = packetTask{pc, (*Conn).retryTask}
	if err := in.OnLoop(pc.register); err != nil {
		unix.Close(fd)
		if pc.unlink != "" {
			os.Remove(pc.unlink)
		}
		return fail(err)
	}
	return pc, nil
}

// opError wraps err as an *net.OpError for op, as net's listen and dial
// errors are; one that already is one is returned as it is.
func opError(op, network string, addr net.Addr, err error) error {
	if oe := (*net.OpError)(nil); errors.As(err, &oe) {
		return err
	}
	return &net.OpError{Op: op, Net: network, Addr: addr, Err: err}
}

// register adds the socket to its loop and starts receiving (on the loop).
func (pc *Conn) register() error {
	if pc.loop.State() >= engine.ShuttingDown {
		return engine.ErrShutdown
	}
	pc.pl = acquirePacketLoop(pc.in.PacketShared(), pc.cfg)
	pc.io, pc.rs = pickDatagramIO(pc.drv, pc.cfg)
	pc.idx, pc.gen = pc.in.Register(registration{pc})
	pc.updateInterest()
	return nil
}

// registration is the socket as its loop's slot table holds it: its
// methods are exported (they cross from package engine), so they are not
// Conn's.
type registration struct{ pc *Conn }

func (r registration) Complete(k driver.OpKind, c *driver.Completion) { r.pc.complete(k, c) }
func (r registration) Shutdown()                                      { r.pc.closeWith(engine.ErrShutdown) }
func (r registration) Abandon()                                       { r.pc.abandon() }

func (pc *Conn) tag(k driver.OpKind) driver.Tag { return driver.MakeTag(pc.idx, pc.gen, k) }

// LocalAddr returns the address the socket is bound to: a *net.UDPAddr or
// a *net.UnixAddr.
func (pc *Conn) LocalAddr() net.Addr { return pc.laddr }

// Loop returns the loop that serves the socket.
func (pc *Conn) Loop() *engine.Loop { return pc.loop }

// Close closes the socket: what WriteTo and WriteMsg accepted is handed
// to the kernel once more (what it does not take at once is dropped), the
// fd is closed, and OnPacketClose(nil) follows. Safe from any goroutine; a
// second Close returns an error wrapping net.ErrClosed.
func (pc *Conn) Close() error {
	if pc.closeCalled.Swap(true) {
		return errPacketClosed
	}
	if pc.loop.InEventLoop() {
		pc.closeWith(nil)
		return nil
	}
	// Refused only once the loop has shut down, which closed the socket.
	_ = pc.in.Control(&pc.closeT)
	return nil
}

// PauseRead stops receiving (Netty's autoRead off): datagrams wait in the
// kernel's receive buffer, which drops what overflows it (counted in
// /proc/net/snmp's RcvbufErrors). Datagrams of a batch already received
// are still delivered. Off the loop it hands itself to the loop, where the
// latest of PauseRead and ResumeRead called off the loop wins.
func (pc *Conn) PauseRead() { pc.setPaused(true) }

// ResumeRead starts receiving again; off the loop as PauseRead.
func (pc *Conn) ResumeRead() { pc.setPaused(false) }

func (pc *Conn) setPaused(p bool) {
	if pc.loop.InEventLoop() {
		pc.applyPause(p)
		return
	}
	v := int32(2)
	if p {
		v = 1
	}
	pc.pauseReq.Store(v)
	if !pc.pauseQueued.Swap(true) {
		_ = pc.in.Control(&pc.pauseT)
	}
}

func (pc *Conn) pauseTask() {
	pc.pauseQueued.Store(false)
	if v := pc.pauseReq.Swap(0); v != 0 {
		pc.applyPause(v == 1)
	}
}

func (pc *Conn) applyPause(p bool) {
	if pc.st != packetOpen || pc.paused == p {
		return
	}
	pc.paused = p
	pc.updateInterest()
}

// want is the readiness the socket waits for now.
func (pc *Conn) want() uint32 {
	if pc.st != packetOpen {
		return 0
	}
	var ev uint32
	if !pc.paused && !pc.ringRecv() {
		ev |= unix.POLLIN
	}
	if pc.blocked && !pc.retrying {
		ev |= unix.POLLOUT
	}
	return ev
}

// updateInterest brings the poll op in line with want: one poll at a time
// per fd (the driver contract), so a change of events cancels the live poll
// and arms the new one at its final completion; ringIO's RECVMSG likewise
// (updateRecv). A closing socket with neither left goes on to close its fd.
func (pc *Conn) updateInterest() {
	pc.updateRecv()
	w := pc.want()
	if pc.polling {
		if pc.poll != w && !pc.cancelling {
			pc.cancelling = true
			pc.drv.Cancel(pc.fd, pc.tag(driver.OpPoll))
		}
		return
	}
	switch {
	case w != 0:
		pc.poll, pc.polling = w, true
		pc.drv.Poll(pc.fd, pc.tag(driver.OpPoll), w)
	case pc.st == packetClosing && !pc.recvArmed && (pc.rs == nil || pc.rs.inflight == 0):
		pc.st = packetCloseFD
		pc.drv.CloseFD(pc.fd, pc.tag(driver.OpClose))
	}
}

// complete handles the socket's completions: readiness of its poll, the
// datagrams of its RECVMSG (ringIO), and the close of its fd.
func (pc *Conn) complete(k driver.OpKind, c *driver.Completion) {
	pc.foldDirect()
	switch k {
	case driver.OpPoll:
		if c.Res > 0 && pc.st == packetOpen {
			pc.ready(uint32(c.Res))
		}
		if c.More {
			return
		}
		pc.polling, pc.cancelling, pc.poll = false, false, 0
		if c.Res < 0 && c.Res != -int32(unix.ECANCELED) && pc.st == packetOpen {
			pc.closeWith(os.NewSyscallError("poll", c.Err()))
		}
		pc.updateInterest()
	case driver.OpRecv:
		pc.received(c)
	case driver.OpSend:
		pc.sent(c)
	case driver.OpClose:
		pc.finish()
	}
}

// ready handles a readiness report: a blocked send goes on, then receive.
func (pc *Conn) ready(ev uint32) {
	if ev&(unix.POLLOUT|unix.POLLERR|unix.POLLHUP) != 0 && pc.blocked && !pc.retrying {
		pc.writable()
	}
	if ev&(unix.POLLIN|unix.POLLERR|unix.POLLHUP) != 0 && !pc.paused && pc.st == packetOpen {
		pc.readable()
	}
}

// closeWith starts closing: AsyncWriteTo's accepted datagrams join the
// queue, the queue gets one more try, the poll is cancelled, then the fd
// is closed through the driver and OnPacketClose(err) follows.
func (pc *Conn) closeWith(err error) {
	if pc.st != packetOpen {
		return
	}
	pc.closeCalled.Store(true)
	pc.drainAsyncWith(errPacketClosed) // no direct send after it
	pc.foldDirect()
	pc.st = packetClosing
	pc.closeErr = err
	if !pc.blocked && !pc.out.empty() {
		_ = pc.io.send(pc)
	}
	pc.sendErrs = pc.sendErrs[:0]
	pc.counts.Dropped += uint64(len(pc.out.msgs) - pc.out.head)
	pc.out.reset()
	pc.outBytes.Store(0)
	pc.blocked = false
	pc.updateInterest()
}

// finish releases the socket once its fd is closed and calls
// OnPacketClose.
func (pc *Conn) finish() {
	if pc.st == packetClosed {
		return
	}
	pc.st = packetClosed
	pc.in.Unregister(pc.idx, pc.gen)
	releasePacketLoop(pc.in.PacketShared(), pc.pl)
	if pc.unlink != "" {
		os.Remove(pc.unlink)
	}
	defer pc.recoverHook("OnPacketClose")
	pc.h.OnPacketClose(pc, pc.closeErr)
}

// abandon finishes the socket without the driver (the loop is about to
// release it).
func (pc *Conn) abandon() {
	if pc.st == packetClosed {
		return
	}
	if pc.closeErr == nil {
		pc.closeErr = pc.in.Fault()
	}
	pc.st = packetCloseFD
	pc.async.Take(errPacketClosed) // no direct send once the fd is closed
	if pc.rs != nil {              // the driver is gone, and the kernel's hold with it
		pc.rs.pin.Unpin()
		pc.rs.inflight = 0
	}
	unix.Close(pc.fd)
	pc.finish()
}

// recoverHook is deferred around OnPacketClose: a panic is reported, and
// the socket is closed already.
func (pc *Conn) recoverHook(what string) {
	if p := recover(); p != nil {
		pc.in.ReportPanic(what, p)
	}
}

// recoverCallback is deferred around the handler's callbacks: a panic is
// reported and closes the socket with an error wrapping a
// *tasks.PanicError.
func (pc *Conn) recoverCallback(what string) {
	if p := recover(); p != nil {
		pc.delivering = false
		pc.in.ReportPanic(what, p)
		pc.closeWith(fmt.Errorf("packet: %s: %w", what, taskq.NewPanicError(p)))
	}
}

// packetError wraps err as net's errors are: op "read" or "write", the
// socket's network and local address, and the peer when known.
func (pc *Conn) packetError(op string, peer net.Addr, err error) error {
	return &net.OpError{Op: op, Net: pc.network, Source: pc.laddr, Addr: peer, Err: err}
}

// reportError calls OnPacketError (on the loop).
func (pc *Conn) reportError(err error) {
	defer pc.recoverCallback("OnPacketError")
	pc.h.OnPacketError(pc, err)
}
