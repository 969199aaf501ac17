package engine

import (
	"context"
	"log/slog"
	"net"
	"os"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/ringloop/ringloop/internal/driver"
	"github.com/ringloop/ringloop/tasks"
)

// Listener accepts stream connections on one loop and hands each to the loop
// its chooser picks.
type Listener struct {
	loop     *Loop
	fd       int
	family   int
	h        Handler
	cfg      *connConfig
	addr     net.Addr
	idx, gen uint32

	flags  lnFlags     // the loop's view of the listener, one word
	shared atomic.Bool // ListenFD or Dup: other descriptors may share the socket
	closed *tasks.Promise[struct{}]

	ho  handoffState // hand-off hook: mode, counters, MSG_RING id (handoff.go)
	ctl listenerCtl  // PauseAccept and ResumeAccept from other goroutines

	backoff  time.Duration // current accept back-off, 0 after a success
	lastLog  int64         // when an accept error was last logged
	unlogged int           // accept errors since then
}

// Accept errors (a full fd table: EMFILE, ENFILE; ENOBUFS, ENOMEM; anything
// else) re-arm accept after a back-off, net/http's: 5 ms doubling to 1 s,
// reset by the next accepted connection. The log says so at most once per
// acceptLogEvery, with the count of errors since its last line.
const (
	acceptBackoffMin = 5 * time.Millisecond
	acceptBackoffMax = time.Second
	acceptLogEvery   = time.Second
)

// Listen opens a listening socket ("tcp", "tcp4", "tcp6" or "unix") on loop l
// and serves every accepted connection with h. SO_REUSEADDR is always set;
// see the ConnOptions for the rest. Safe from any goroutine.
//
// An accept that fails (out of descriptors: EMFILE, ENFILE) is retried after
// a back-off of 5 ms doubling to 1 s, logged at most once a second and
// counted in Metrics.AcceptErrors. Note that io_uring's multishot accept
// (kernels 5.19 and later) does not see an RLIMIT_NOFILE lowered after
// Listen: it goes on accepting up to the limit in force when it was armed.
//
// Its errors are *net.OpError with Op "listen", as net.Listen's.
func Listen(l *Loop, network, addr string, h Handler, opts ...ConnOption) (*Listener, error) {
	if h == nil {
		return nil, errNilHandler
	}
	cfg, err := newConnConfig(network, opts)
	if err != nil {
		return nil, opError("listen", network, nil, nil, err)
	}
	family, sa, err := resolve(network, addr)
	if err != nil {
		return nil, opError("listen", network, nil, nil, err)
	}
	fail := func(err error) (*Listener, error) {
		return nil, opError("listen", network, nil, sockaddrToAddr(sa, network), err)
	}
	fd, err := newSocket(family)
	if err != nil {
		return fail(err)
	}
	if err := listenOn(fd, family, sa, cfg); err != nil {
		unix.Close(fd)
		return fail(err)
	}
	ln, err := serveListener(l, fd, family, h, cfg, false)
	if err != nil {
		unix.Close(fd)
		return fail(err)
	}
	return ln, nil
}

// serveListener starts accepting on a listening fd (the caller closes fd on
// lnFlags is a listener's state, one bit each, read and written on its loop.
type lnFlags uint8

const (
	lnArmed     lnFlags = 1 << iota // an accept op is armed
	lnPaused                        // PauseAccept: not re-armed until ResumeAccept
	lnAdopted                       // ListenFD: a Unix socket's path is not ours to remove
	lnClosing                       // Close began
	lnCloseDone                     // CloseFD completed
)

func (ln *Listener) has(f lnFlags) bool { return ln.flags&f != 0 }
func (ln *Listener) set(f lnFlags)      { ln.flags |= f }
func (ln *Listener) clear(f lnFlags)    { ln.flags &^= f }

// error); adopted: the fd came from ListenFD.
func serveListener(l *Loop, fd, family int, h Handler, cfg *connConfig, adopted bool) (*Listener, error) {
	ln := &Listener{loop: l, fd: fd, family: family, h: h, cfg: cfg, closed: tasks.NewPromise[struct{}](nil)}
	ln.ctl.ln = ln
	ln.shared.Store(adopted)
	if adopted {
		ln.set(lnAdopted)
	}
	if lsa, err := unix.Getsockname(fd); err == nil {
		ln.addr = sockaddrToAddr(lsa, cfg.network)
	}
	if err := l.onLoop(func() error {
		if l.State() >= ShuttingDown {
			return ErrShutdown
		}
		ln.idx, ln.gen = l.reg.add(ln)
		ln.arm()
		return nil
	}); err != nil {
		return nil, err
	}
	return ln, nil
}

func listenOn(fd, family int, sa unix.Sockaddr, cfg *connConfig) error {
	if family != unix.AF_UNIX {
		if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_REUSEADDR, 1); err != nil {
			return os.NewSyscallError("setsockopt SO_REUSEADDR", err)
		}
		if cfg.reusePort {
			if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_REUSEPORT, 1); err != nil {
				return os.NewSyscallError("setsockopt SO_REUSEPORT", err)
			}
		}
	}
	if err := applySocketBuffers(fd, cfg); err != nil {
		return err
	}
	if err := unix.Bind(fd, sa); err != nil {
		return os.NewSyscallError("bind", err)
	}
	if err := unix.Listen(fd, cfg.backlog); err != nil {
		return os.NewSyscallError("listen", err)
	}
	return nil
}

// Addr returns the address the listener is bound to.
func (ln *Listener) Addr() net.Addr { return ln.addr }

// Loop returns the accepting loop.
func (ln *Listener) Loop() *Loop { return ln.loop }

func (ln *Listener) tag(k driver.OpKind) driver.Tag { return makeTag(ln.idx, ln.gen, k) }

func (ln *Listener) arm() {
	if ln.has(lnArmed) || ln.has(lnClosing) || ln.has(lnPaused) {
		return
	}
	ln.set(lnArmed)
	ln.loop.drv.Accept(ln.fd, ln.tag(driver.OpAccept))
}

// PauseAccept stops accepting (Netty's autoRead off on a server channel):
// connections wait in the kernel's backlog, so a consumer that cannot keep up
// bounds what the process holds. Accepts already completing still arrive.
// Off the loop it hands itself to the loop's control ring (which a bounded
// task ring cannot refuse), where the latest of PauseAccept and ResumeAccept
// called off the loop wins.
func (ln *Listener) PauseAccept() { ln.requestAccept(false) }

func (ln *Listener) pauseAccept() {
	if ln.has(lnPaused) {
		return
	}
	ln.set(lnPaused)
	if ln.has(lnArmed) && !ln.has(lnClosing) {
		ln.loop.drv.Cancel(ln.fd, ln.tag(driver.OpAccept))
	}
}

// ResumeAccept accepts again after PauseAccept. Off the loop it hands
// itself to the loop, as PauseAccept.
func (ln *Listener) ResumeAccept() { ln.requestAccept(true) }

// requestAccept resumes (or pauses) accepting on the loop, or hands the wish
// to the loop's control ring from any other goroutine.
func (ln *Listener) requestAccept(resume bool) {
	if !ln.loop.InEventLoop() {
		ln.ctl.request(resume)
		return
	}
	if resume {
		ln.resumeAccept()
	} else {
		ln.pauseAccept()
	}
}

func (ln *Listener) resumeAccept() {
	ln.clear(lnPaused)
	ln.arm()
}

// listenerCtl carries PauseAccept and ResumeAccept from other goroutines to
// the listener's loop: one pre-built task, queued at most once at a time on
// the control ring, and the latest wish.
type listenerCtl struct {
	ln    *Listener
	state atomic.Uint32 // ctlIdle, or the wish with ctlQueued
}

const (
	ctlPause  uint32 = 1
	ctlResume uint32 = 2
	ctlQueued uint32 = 4
)

func (t *listenerCtl) request(resume bool) {
	wish := ctlPause
	if resume {
		wish = ctlResume
	}
	if t.state.Swap(wish|ctlQueued)&ctlQueued != 0 {
		return
	}
	// Refused only once the loop has shut down, which closed the listener.
	_ = t.ln.loop.control(t)
}

// Run applies the latest wish on the loop.
func (t *listenerCtl) Run() {
	switch t.state.Swap(0) &^ ctlQueued {
	case ctlPause:
		t.ln.pauseAccept()
	case ctlResume:
		t.ln.resumeAccept()
	}
}

// Close stops accepting and closes the listening socket (connections already
// accepted stay open). It waits until the socket is closed, unless called on
// the loop. Safe from any goroutine; closing twice is a no-op.
//
// Once Close returns or Done completes, new connections are refused, in every
// backend and threading mode: the socket is shut down before its descriptor
// is closed, since closing alone frees it only when the last reference goes,
// and io_uring's accept request may hold one a moment longer (a parked loop's
// request is freed on the thread that armed it). A socket that may be shared
// (ListenFD, Dup) is not shut down, only this listener's descriptor closed:
// the socket goes on accepting for the other holders.
func (ln *Listener) Close() error {
	if err := ln.loop.onLoop(func() error { ln.close(); return nil }); err != nil {
		return err
	}
	if ln.loop.InEventLoop() {
		return nil
	}
	_, err := ln.closed.Await(context.Background())
	return err
}

// Closed completes once the listening socket is closed (a future, for a
// callback on the loop that closed it; Loop.Done is a channel).
func (ln *Listener) Closed() tasks.Future[struct{}] { return ln.closed }

func (ln *Listener) close() {
	if ln.has(lnClosing) {
		return
	}
	ln.set(lnClosing)
	if !ln.shared.Load() {
		// TCP: stops listening at once (pending connections are reset, new
		// ones refused); Unix: connect is refused from now on.
		_ = unix.Shutdown(ln.fd, unix.SHUT_RD)
	}
	if ln.has(lnArmed) {
		ln.loop.drv.Cancel(ln.fd, ln.tag(driver.OpAccept))
	}
	ln.loop.drv.CloseFD(ln.fd, ln.tag(driver.OpClose))
	if ln.family == unix.AF_UNIX && ln.addr != nil && !ln.has(lnAdopted) {
		_ = os.Remove(ln.addr.String())
	}
}

func (ln *Listener) complete(k driver.OpKind, c *driver.Completion) {
	switch k {
	case driver.OpAccept:
		if !c.More {
			ln.clear(lnArmed)
		}
		switch {
		case c.Res >= 0 && ln.has(lnClosing):
			// Accepted before Close began but reaped after (or, a shared
			// socket, while a parked io_uring loop's cancel was still on
			// its way): nobody will serve it.
			unix.Close(int(c.Res))
		case c.Res >= 0:
			ln.backoff = 0
			ln.accepted(int(c.Res))
			if !c.More && !ln.has(lnClosing) {
				ln.arm()
			}
		case ln.has(lnClosing):
		case c.Res == -int32(unix.ECANCELED):
			if !c.More {
				ln.arm() // ResumeAccept came before the cancel landed
			}
		default:
			ln.acceptFailed(c)
		}
	case driver.OpClose:
		ln.set(lnCloseDone)
	}
	ln.maybeRelease()
}

// acceptFailed counts an accept error, logs it (rate-limited) and re-arms
// accept after the back-off.
func (ln *Listener) acceptFailed(c *driver.Completion) {
	l := ln.loop
	l.stats.acceptErrors.Add(1)
	ln.backoff = min(max(2*ln.backoff, acceptBackoffMin), acceptBackoffMax)
	ln.unlogged++
	if t := now(); ln.lastLog == 0 || t-ln.lastLog >= int64(acceptLogEvery) {
		l.cfg.logger.Warn("ringloop: accept failed; retrying after a back-off",
			slog.Any("listener", ln.addr), slog.Any("err", ln.acceptError(c.Err())),
			slog.Duration("retry in", ln.backoff), slog.Int("errors since last report", ln.unlogged))
		ln.lastLog, ln.unlogged = t, 0
	}
	if !c.More {
		_, _ = l.Schedule(tasks.Func(ln.arm), ln.backoff)
	}
}

// acceptError is an accept errno as net reports it:
// "accept tcp 127.0.0.1:8080: accept: too many open files".
func (ln *Listener) acceptError(errno error) error {
	return opError("accept", ln.cfg.network, nil, ln.addr, os.NewSyscallError("accept", errno))
}

func (ln *Listener) maybeRelease() {
	if ln.has(lnClosing) && ln.has(lnCloseDone) && !ln.has(lnArmed) {
		ln.loop.reg.remove(ln.idx, ln.gen)
		ln.closed.Succeed(struct{}{})
	}
}

// accepted serves a new connection on the loop the chooser picks.
func (ln *Listener) accepted(fd int) {
	if ln.has(lnClosing) {
		unix.Close(fd)
		return
	}
	if err := applyConnOptions(fd, ln.family, ln.cfg, false); err != nil {
		ln.loop.cfg.logger.Warn("ringloop: accepted socket options", slog.Any("err", err))
	}
	target := ln.loop
	if ln.cfg.chooser != nil {
		if t := ln.choose(); t != nil {
			target = t
		}
	}
	// Hand-off hook (handoff.go): serve here, or send the fd to target with
	// MSG_RING or through its task ring.
	ln.handOff(target, fd)
}

// choose calls the chooser, a user hook (a panic: serve here).
func (ln *Listener) choose() *Loop {
	defer ln.loop.recoverHook("chooser")
	return ln.cfg.chooser()
}

// handoff starts serving an accepted fd on another loop.
type handoff struct {
	loop *Loop
	fd   int
	h    Handler
	cfg  *connConfig
}

func (t *handoff) Run() {
	if t.loop.State() >= ShuttingDown {
		t.cfg.refused(t.loop, t.fd)
		return
	}
	newConn(t.loop, t.fd, t.h, t.cfg).open()
}

func (ln *Listener) shutdown() { ln.close() }

func (ln *Listener) abandon() {
	if !ln.has(lnClosing) {
		unix.Close(ln.fd)
	}
	ln.set(lnClosing | lnCloseDone)
	ln.clear(lnArmed)
	ln.maybeRelease()
}
