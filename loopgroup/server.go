package loopgroup

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/tasks"
)

// ServerOption configures Serve.
type ServerOption func(*serverConfig) error

type serverConfig struct {
	boss    *Group
	perLoop bool
	conn    []engine.ConnOption
}

// WithBoss accepts on a loop of boss (boss.Next()) and serves on the
// workers: the main/sub reactor model. Without it the workers group accepts
// too (Netty's group(g) = group(g, g)); a group of one is the single-threaded
// reactor.
func WithBoss(boss *Group) ServerOption {
	return func(c *serverConfig) error {
		if boss == nil {
			return errors.New("loopgroup: nil boss group")
		}
		c.boss = boss
		return nil
	}
}

// WithListenerPerLoop gives every worker loop its own listening socket on
// the same port, each with SO_REUSEPORT (engine.SocketOptions.ReusePort):
// the kernel spreads incoming connections over them and each loop accepts
// for itself, with no hand-off. TCP only; WithBoss is ignored.
// (SocketOptions.ReusePort alone, through WithConnOptions, only sets
// SO_REUSEPORT on the one listening socket, so that other processes may
// bind the port too.)
func WithListenerPerLoop() ServerOption {
	return func(c *serverConfig) error { c.perLoop = true; return nil }
}

// WithConnOptions adds engine.ConnOption values for the sockets Serve makes:
// the listening socket and every accepted connection (Netty's option and
// childOption): socket options, buffer limits, timeouts, observers. It means
// the same wherever it is spelt (netconn.WithConnOptions); Group.Dial and
// engine's functions take ConnOption values directly.
func WithConnOptions(opts ...engine.ConnOption) ServerOption {
	return func(c *serverConfig) error { c.conn = append(c.conn, opts...); return nil }
}

// Server is a listening server bound to its worker loops (Netty's
// ServerBootstrap and its bound server channel). Every accepted connection is served on one
// worker loop for its whole life.
type Server struct {
	workers   *Group
	listeners []*engine.Listener
	live      *connSet
	stopOnce  sync.Once
}

// Serve listens on addr ("tcp", "tcp4", "tcp6" or "unix") and serves every
// accepted connection with h on a loop of workers: a *Group, or one
// *engine.Loop (a group of one: the single-threaded reactor, or with
// WithBoss a boss group that accepts for it). The one type for "a loop or a
// group" is engine.Loops; Serve needs one of these two because it counts
// each worker loop's connections. With WithBoss, a boss loop accepts and
// hands each connection to workers.Next(): through MSG_RING on io_uring
// kernels that have it (the worker loops are started here, since MSG_RING
// needs a running ring), else through the worker's task ring. Without it
// the workers accept for themselves (Netty's group(g) = group(g, g)); with
// WithListenerPerLoop each worker loop accepts for itself on its own
// socket.
func Serve(workers engine.Loops, network, addr string, h engine.Handler, opts ...ServerOption) (*Server, error) {
	var g *Group
	switch w := workers.(type) {
	case *Group:
		g = w
	case *engine.Loop:
		g = groupOf(w)
	default:
		return nil, fmt.Errorf("loopgroup: Serve needs a *Group or an *engine.Loop, got %T", workers)
	}
	if h == nil {
		return nil, errors.New("loopgroup: nil handler")
	}
	var c serverConfig
	for _, o := range opts {
		if err := o(&c); err != nil {
			return nil, err
		}
	}
	s := &Server{workers: g, live: newConnSet(g)}
	if c.perLoop {
		if err := s.listenPerLoop(network, addr, h, &c); err != nil {
			return nil, err
		}
		return s, nil
	}
	boss := c.boss
	if boss == nil {
		boss = g
	}
	// Start the workers: MSG_RING can only reach a ring its loop enabled.
	if err := startAll(g); err != nil {
		return nil, err
	}
	copts := append([]engine.ConnOption{engine.WithWorkers(counting{g}),
		engine.WithObserver(&tracker{g: g, reserved: true, srv: s})}, c.conn...)
	bl := boss.Next()
	ln, err := engine.Listen(bl, network, addr, h, copts...)
	if err != nil {
		return nil, err
	}
	s.listeners = []*engine.Listener{ln}
	return s, nil
}

// counting is a server's workers group whose choices count: a connection
// counts on its loop from the moment the loop is chosen, so a burst of
// accepts spreads at once.
type counting struct{ *Group }

func (c counting) Next() *engine.Loop {
	l := c.Group.Next()
	c.addLoad(l, 1)
	return l
}

// Refused undoes the count raised when target was chosen for a connection
// it then refused (it was shutting down; see engine.WithWorkers).
func (c counting) Refused(target *engine.Loop) { c.addLoad(target, -1) }

// listenPerLoop opens one SO_REUSEPORT listener per worker loop, all on the
// port the first one got.
func (s *Server) listenPerLoop(network, addr string, h engine.Handler, c *serverConfig) error {
	copts := append([]engine.ConnOption{engine.WithSocketOptions(engine.SocketOptions{ReusePort: true}),
		engine.WithObserver(&tracker{g: s.workers, srv: s})}, c.conn...)
	for i, l := range s.workers.loops {
		ln, err := engine.Listen(l, network, addr, h, copts...)
		if err != nil {
			s.closeListeners()
			return fmt.Errorf("loopgroup: reuse-port listener %d: %w", i, err)
		}
		s.listeners = append(s.listeners, ln)
		if i == 0 {
			ta, ok := ln.Addr().(*net.TCPAddr)
			if !ok {
				s.closeListeners()
				return fmt.Errorf("loopgroup: SO_REUSEPORT needs TCP, got %s", network)
			}
			host, _, err := net.SplitHostPort(addr)
			if err != nil {
				s.closeListeners()
				return err
			}
			addr = net.JoinHostPort(host, strconv.Itoa(ta.Port))
		}
	}
	return nil
}

// startAll starts every loop of g and waits until each runs.
func startAll(g *Group) error {
	fs := make([]tasks.Future[struct{}], len(g.loops))
	for i, l := range g.loops {
		fs[i] = engine.Submit(l, func() (struct{}, error) { return struct{}{}, nil })
	}
	for _, f := range fs {
		if _, err := f.Await(context.Background()); err != nil {
			return err
		}
	}
	return nil
}

// barrier runs a no-op on every loop of g and waits for each; a loop that
// refuses (shut down) has nothing left to wait for.
func barrier(g *Group) {
	if g.InEventLoop() {
		return
	}
	for _, l := range g.loops {
		_, _ = engine.Submit(l, func() (struct{}, error) { return struct{}{}, nil }).Await(context.Background())
	}
}

// Addr returns the address the server listens on (with WithListenerPerLoop, every
// listener shares it).
func (s *Server) Addr() net.Addr { return s.listeners[0].Addr() }

// Listeners returns the server's listening sockets: one, or one per worker
// loop with WithListenerPerLoop.
func (s *Server) Listeners() []*engine.Listener {
	return append([]*engine.Listener(nil), s.listeners...)
}

// Connections returns the number of live connections the server accepted.
func (s *Server) Connections() int { return int(s.live.n.Load()) }

// forceCloseWait bounds how long Shutdown and Close wait for connections they
// closed or aborted to report OnClose.
const forceCloseWait = 5 * time.Second

// ErrConnsLeft: connections were still open forceCloseWait after the server
// closed them (a worker loop is stuck in a handler).
var ErrConnsLeft = errors.New("loopgroup: connections did not close")

// Shutdown stops accepting (closes the listening sockets), then waits for
// the live connections to close by themselves. When ctx ends first it closes
// those left at once: with nothing to send they close (the peer reads EOF),
// with bytes still unsent they are aborted (the peer sees a reset). It waits
// for their OnClose and returns ctx.Err(). It does not shut the groups down.
// Safe to call more than once. On one of the server's loops (from a handler)
// it cannot wait: it goes on in the background and returns ErrCalledFromLoop
// at once.
func (s *Server) Shutdown(ctx context.Context) error {
	if s.onLoop() {
		go func() { _ = s.Shutdown(ctx) }()
		return ErrCalledFromLoop
	}
	s.stopAccepting()
	select {
	case <-s.live.drained():
		return nil
	case <-ctx.Done():
	}
	if err := s.endAll(closeNow); err != nil {
		return err
	}
	return ctx.Err()
}

// Close stops accepting and closes every live connection now, flushing what
// was written; those that cannot finish within a few seconds (a peer that
// does not read) are aborted. It waits for their OnClose. On one of the
// server's loops (from a handler) it cannot wait: it goes on in the
// background and returns ErrCalledFromLoop at once.
func (s *Server) Close() error {
	if s.onLoop() {
		go func() { _ = s.Close() }()
		return ErrCalledFromLoop
	}
	s.stopAccepting()
	if s.endAll((*engine.Conn).Close) == nil {
		return nil
	}
	return s.endAll((*engine.Conn).Abort)
}

// closeNow closes c without waiting for a flush: Close then Abort, which
// runs after it on the loop and ends a close that is still flushing.
func closeNow(c *engine.Conn) error {
	_ = c.Close()
	return c.Abort()
}

// endAll ends every live connection with end and waits, up to
// forceCloseWait, for their OnClose.
func (s *Server) endAll(end func(*engine.Conn) error) error {
	s.live.each(end)
	t := time.NewTimer(forceCloseWait)
	defer t.Stop()
	select {
	case <-s.live.drained():
		return nil
	case <-t.C:
		return fmt.Errorf("%w: %d left", ErrConnsLeft, s.Connections())
	}
}

// stopAccepting closes the listeners, then runs a no-op on every worker loop
// so that connections handed over before the close have reached (and been
// counted on) their loops.
func (s *Server) stopAccepting() {
	s.stopOnce.Do(func() {
		s.closeListeners()
		barrier(s.workers)
	})
}

// onLoop reports whether the caller runs on a loop the server's shutdown
// waits for: a worker or an accepting loop.
func (s *Server) onLoop() bool {
	if s.workers.InEventLoop() {
		return true
	}
	for _, ln := range s.listeners {
		if ln.Loop().InEventLoop() {
			return true
		}
	}
	return false
}

func (s *Server) closeListeners() {
	for _, ln := range s.listeners {
		_ = ln.Close()
	}
}
