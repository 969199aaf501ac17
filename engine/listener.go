package engine

import (
	"context"
	"log/slog"
	"net"
	"os"
	"time"

	"golang.org/x/sys/unix"

	"github.com/ringloop/ringloop/driver"
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

	armed     bool
	closing   bool
	closeDone bool
	closed    *tasks.Promise[struct{}]

	ho handoffState // hand-off hook: mode, counters, MSG_RING id (handoff.go)
}

// acceptRetryDelay spaces re-arming accept after a resource error (EMFILE,
// ENFILE, ENOBUFS, ENOMEM) so a full fd table does not spin the loop.
const acceptRetryDelay = 10 * time.Millisecond

// Listen opens a listening socket ("tcp", "tcp4", "tcp6" or "unix") on loop l
// and serves every accepted connection with h. SO_REUSEADDR is always set;
// see the ConnOptions for the rest. Safe from any goroutine.
func Listen(l *Loop, network, addr string, h Handler, opts ...ConnOption) (*Listener, error) {
	if h == nil {
		return nil, errNilHandler
	}
	cfg, err := newConnConfig(network, opts)
	if err != nil {
		return nil, err
	}
	family, sa, err := resolve(network, addr)
	if err != nil {
		return nil, err
	}
	fd, err := newSocket(family)
	if err != nil {
		return nil, err
	}
	if err := listenOn(fd, family, sa, cfg); err != nil {
		unix.Close(fd)
		return nil, err
	}
	ln := &Listener{loop: l, fd: fd, family: family, h: h, cfg: cfg, closed: tasks.NewPromise[struct{}](nil)}
	if lsa, err := unix.Getsockname(fd); err == nil {
		ln.addr = sockaddrToAddr(lsa, network)
	}
	if err := l.onLoop(func() error {
		if l.IsShuttingDown() {
			return ErrShutdown
		}
		ln.idx, ln.gen = l.reg.add(ln)
		ln.arm()
		return nil
	}); err != nil {
		unix.Close(fd)
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
	if err := applyBufferSizes(fd, cfg); err != nil {
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

func (ln *Listener) tag(k opKind) driver.Tag { return makeTag(ln.idx, ln.gen, k) }

func (ln *Listener) arm() {
	if ln.armed || ln.closing {
		return
	}
	ln.armed = true
	ln.loop.drv.Accept(ln.fd, ln.tag(opAccept))
}

// Close stops accepting and closes the listening socket (connections already
// accepted stay open). It waits until the socket is closed, unless called on
// the loop. Safe from any goroutine; closing twice is a no-op.
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

// Done completes once the listening socket is closed.
func (ln *Listener) Done() tasks.Future[struct{}] { return ln.closed }

func (ln *Listener) close() {
	if ln.closing {
		return
	}
	ln.closing = true
	if ln.armed {
		ln.loop.drv.Cancel(ln.fd, ln.tag(opAccept))
	}
	ln.loop.drv.CloseFD(ln.fd, ln.tag(opClose))
	if ln.family == unix.AF_UNIX && ln.addr != nil {
		_ = os.Remove(ln.addr.String())
	}
}

func (ln *Listener) complete(k opKind, c *driver.Completion) {
	switch k {
	case opAccept:
		if !c.More {
			ln.armed = false
		}
		switch {
		case c.Res >= 0:
			ln.accepted(int(c.Res))
			if !c.More && !ln.closing {
				ln.arm()
			}
		case ln.closing || c.Res == -int32(unix.ECANCELED):
		case c.Res == -int32(unix.EMFILE) || c.Res == -int32(unix.ENFILE) ||
			c.Res == -int32(unix.ENOBUFS) || c.Res == -int32(unix.ENOMEM):
			ln.loop.cfg.logger.Warn("ringloop: accept failed; retrying", slog.Any("err", c.Err()))
			if !c.More {
				_, _ = ln.loop.ScheduleFunc(ln.arm, acceptRetryDelay)
			}
		default:
			if !c.More {
				ln.loop.cfg.logger.Warn("ringloop: accept failed; re-arming", slog.Any("err", c.Err()))
				ln.arm()
			}
		}
	case opClose:
		ln.closeDone = true
	}
	ln.maybeRelease()
}

func (ln *Listener) maybeRelease() {
	if ln.closing && ln.closeDone && !ln.armed {
		ln.loop.reg.remove(ln.idx, ln.gen)
		ln.closed.Succeed(struct{}{})
	}
}

// accepted serves a new connection on the loop the chooser picks.
func (ln *Listener) accepted(fd int) {
	if ln.closing {
		unix.Close(fd)
		return
	}
	if err := applyConnOptions(fd, ln.family, ln.cfg, false); err != nil {
		ln.loop.cfg.logger.Warn("ringloop: accepted socket options", slog.Any("err", err))
	}
	target := ln.loop
	if ln.cfg.chooser != nil {
		if t := ln.cfg.chooser(); t != nil {
			target = t
		}
	}
	// Hand-off hook (handoff.go): serve here, or send the fd to target with
	// MSG_RING or through its task ring.
	ln.handOff(target, fd)
}

// handoff starts serving an accepted fd on another loop.
type handoff struct {
	loop *Loop
	fd   int
	h    Handler
	cfg  *connConfig
}

func (t *handoff) Run() {
	if t.loop.IsShuttingDown() {
		unix.Close(t.fd)
		return
	}
	newConn(t.loop, t.fd, t.h, t.cfg).open()
}

func (ln *Listener) shutdown() { ln.close() }

func (ln *Listener) abandon() {
	if !ln.closing {
		unix.Close(ln.fd)
	}
	ln.closing, ln.closeDone, ln.armed = true, true, false
	ln.maybeRelease()
}
