package httpserver

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/internal/loopctl"
	"github.com/ringloop/ringloop/internal/workers"
	"github.com/ringloop/ringloop/loopgroup"
	"github.com/ringloop/ringloop/tasks"
)

// Handler serves one request on the connection's loop (the fast API,
// NewFast). The request view and the response writer are valid only during
// the call. A handler that blocks stalls every connection of its loop.
type Handler interface {
	ServeFast(w *Response, r *Request)
}

// BodyStreamer is a Handler that takes some request bodies as a stream.
// Once a request's head is read, the server asks StreamBody (on the loop;
// the body is not there yet). If it returns true, ServeFast runs at once,
// Request.Body is nil and Request.BodyStream returns the body, read while
// it arrives; the handler defers its response (Response.Defer) and reads
// the body from another goroutine. The body's bytes in memory stay within
// a window of 64 KiB whatever its length; Limits.StreamedBody bounds it.
// Other requests get whole bodies, as with a plain Handler; a StreamBody
// that returns true streams them all.
type BodyStreamer interface {
	Handler
	StreamBody(r *Request) bool
}

// HandlerFunc adapts a function to Handler.
type HandlerFunc func(w *Response, r *Request)

// ServeFast calls f(w, r).
func (f HandlerFunc) ServeFast(w *Response, r *Request) { f(w, r) }

// errConnGone: the client went away before the response was written.
var errConnGone = errors.New("httpserver: connection closed")

// Server is an HTTP/1.1 and HTTP/2 server on ringloop loops; Listen serves
// connections with it.
type Server struct {
	cfg  *config
	fast Handler
	std  http.Handler

	mu         sync.Mutex
	loops      sync.Map // *engine.Loop → *loopState; read without a lock on every open
	servers    []*loopgroup.Server
	closing    atomic.Bool
	live       atomic.Int64
	drained    chan struct{} // closed when live reaches 0 while closing
	drainOnce  sync.Once
	onShutdown []func()
}

// New returns a server for any http.Handler (the adapter): each request
// runs on its own goroutine, as on net/http, with an *http.Request whose
// Body streams the request body as it arrives, or on the loop with
// WithInlineHTTP, the body then read whole first.
func New(h http.Handler, opts ...Option) (*Server, error) {
	if h == nil {
		return nil, errors.New("httpserver: nil handler")
	}
	return newServer(opts, nil, h)
}

// NewFast returns a server for the fast API: h runs on the connection's
// loop with a Request view and a reused Response, no allocation per
// request, and must not block (Response.Defer answers from elsewhere).
func NewFast(h Handler, opts ...Option) (*Server, error) {
	if h == nil {
		return nil, errors.New("httpserver: nil handler")
	}
	return newServer(opts, h, nil)
}

func newServer(opts []Option, fast Handler, std http.Handler) (*Server, error) {
	cfg, err := newConfig(opts)
	if err != nil {
		return nil, err
	}
	fast, std = counted(fast, std) // request metrics (metrics.go)
	return &Server{cfg: cfg, fast: fast, std: std, drained: make(chan struct{})}, nil
}

// Listen serves on loops, a *loopgroup.Group or one *engine.Loop, with any
// of loopgroup's reactor models: the loops accept for themselves by
// default, loopgroup.WithBoss accepts on another group, and
// loopgroup.WithListenerPerLoop gives each loop its own SO_REUSEPORT socket;
// loopgroup.WithConnOptions carries socket and connection options. It
// returns the address listened on, and http.ErrServerClosed after Shutdown
// or Close. Call it as often as there are addresses to serve.
func (s *Server) Listen(loops engine.Loops, network, addr string, opts ...loopgroup.ServerOption) (net.Addr, error) {
	if s.closing.Load() {
		return nil, http.ErrServerClosed
	}
	return s.serve(loops, network, addr, (*handler)(s), opts)
}

// serve serves h's connections (plain or TLS) on addr.
func (s *Server) serve(loops engine.Loops, network, addr string, h engine.Handler, opts []loopgroup.ServerOption) (net.Addr, error) {
	srv, err := loopgroup.Serve(loops, network, addr, h, opts...)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.servers = append(s.servers, srv)
	s.mu.Unlock()
	return srv.Addr(), nil
}

// Shutdown stops accepting, closes idle keep-alive connections, lets
// requests in flight finish (each connection closes after its current
// response), and once ctx ends closes the rest and returns ctx.Err(). It
// waits on the server's loops: do not call it from one of them.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	hooks := s.onShutdown
	s.mu.Unlock()
	for _, f := range hooks {
		go f()
	}
	s.beginClose(false)
	select {
	case <-s.drained:
		return s.finishClose()
	case <-ctx.Done():
	}
	s.beginClose(true)
	_ = s.finishClose()
	return ctx.Err()
}

// RegisterOnShutdown registers a function to call when Shutdown starts, each
// on its own goroutine, as net/http's: a way to end long-lived streams (SSE,
// hijacked or upgraded connections) that would otherwise last until the
// shutdown's deadline.
func (s *Server) RegisterOnShutdown(f func()) {
	s.mu.Lock()
	s.onShutdown = append(s.onShutdown, f)
	s.mu.Unlock()
}

// logger is where the server reports what it cannot return (WithLogger).
func (s *Server) logger() *slog.Logger {
	if l := s.cfg.logger; l != nil {
		return l
	}
	return slog.Default()
}

// Close stops accepting and closes every connection now (not from one of the
// server's loops).
func (s *Server) Close() error {
	s.beginClose(true)
	return s.finishClose()
}

// beginClose closes the listeners and, on every loop, the idle connections
// (all of them when force).
func (s *Server) beginClose(force bool) {
	s.closing.Store(true)
	s.mu.Lock()
	servers := s.servers
	s.mu.Unlock()
	for _, g := range servers {
		for _, ln := range g.Listeners() {
			_ = ln.Close()
		}
	}
	var states []*loopState
	s.loops.Range(func(_, v any) bool {
		states = append(states, v.(*loopState))
		return true
	})
	for _, ls := range states {
		runOnLoop(ls.loop, func() { ls.closeConns(force) })
	}
	s.checkDrained()
}

// runOnLoop runs fn on l and waits for it: at once on l itself, else on l's
// control ring (package loopctl), which a user's engine.WithMaxPendingTasks
// cannot fill, so closing the server always reaches every connection. A
// loop that has shut down refuses, and has closed its connections itself.
func runOnLoop(l *engine.Loop, fn func()) {
	if l.InEventLoop() {
		fn()
		return
	}
	done := make(chan struct{})
	if loopctl.Run(l, tasks.Func(func() { defer close(done); fn() })) != nil {
		return
	}
	<-done
}

// finishClose waits (boundedly) for the connections to report closed and
// releases the group servers.
func (s *Server) finishClose() error {
	t := time.NewTimer(5 * time.Second)
	defer t.Stop()
	var err error
	select {
	case <-s.drained:
	case <-t.C:
		err = errors.New("httpserver: connections did not close")
	}
	s.mu.Lock()
	servers := s.servers
	s.mu.Unlock()
	s.loops.Range(func(_, v any) bool {
		if ls := v.(*loopState); ls.tick != nil {
			ls.tick.Cancel()
		}
		return true
	})
	for _, g := range servers {
		_ = g.Close()
	}
	return err
}

func (s *Server) checkDrained() {
	if s.closing.Load() && s.live.Load() == 0 {
		s.drainOnce.Do(func() { close(s.drained) })
	}
}

// loopState is what one loop keeps for the server: its connections, the
// Date header of the current second, the reusable fast-API writer and a
// scratch buffer. Only its loop touches it.
type loopState struct {
	s       *Server
	loop    *engine.Loop
	conns   []*conn
	now     int64 // unix nanoseconds at the last tick
	date    []byte
	dateSec int64
	tick    tasks.Future[struct{}]
	pool    *workers.Pool // the adapter's goroutines
	resp    Response
	req     Request
	scratch []byte
	h2      *h2Loop // its HTTP/2 connections' shared Framer and buffers
}

// stateFor returns the loop's state, creating it (and its tick) on first use
// (on l). Only l itself creates its entry, so a lookup needs no lock, and the
// entry is stored complete: Shutdown and Close read its tick from elsewhere.
func (s *Server) stateFor(l *engine.Loop) *loopState {
	if v, ok := s.loops.Load(l); ok {
		return v.(*loopState)
	}
	ls := &loopState{s: s, loop: l}
	ls.onTick()
	ls.pool = workers.For(l)
	if !s.closing.Load() {
		// stateFor runs on l (OnOpen), where scheduling starts the timer at
		// once, without the task ring a user may bound; it fails only once l
		// has shut down, which closes every connection (so none is left
		// without its deadlines).
		d := s.cfg.tick()
		if t, err := l.ScheduleAtFixedRate(tasks.Func(ls.onTick), d, d); err == nil {
			ls.tick = t
		}
	}
	s.loops.Store(l, ls)
	if ls.tick != nil && s.closing.Load() {
		// Close began meanwhile and may have missed the entry: a loop
		// that joins a closing server gets no tick, as before.
		ls.tick.Cancel()
	}
	return ls
}

// onTick refreshes the clock and the Date line and closes connections past
// their deadline.
func (ls *loopState) onTick() {
	t := time.Now()
	ls.now = t.UnixNano()
	ls.updateDate(t)
	for i := 0; i < len(ls.conns); i++ {
		ls.conns[i].checkDeadlines(ls.now)
	}
}

func (ls *loopState) add(cs *conn) {
	cs.idx = len(ls.conns)
	ls.conns = append(ls.conns, cs)
}

func (ls *loopState) remove(cs *conn) {
	last := len(ls.conns) - 1
	if cs.idx < 0 || cs.idx > last || ls.conns[cs.idx] != cs {
		return
	}
	ls.conns[cs.idx] = ls.conns[last]
	ls.conns[cs.idx].idx = cs.idx
	ls.conns[last] = nil
	ls.conns = ls.conns[:last]
	cs.idx = -1
}

// closeConns closes the idle connections (all of them when force).
func (ls *loopState) closeConns(force bool) {
	for _, cs := range append([]*conn(nil), ls.conns...) {
		switch {
		case force || cs.h2 == nil && cs.idle():
			_ = cs.c.Close()
		case cs.h2 != nil:
			cs.h2.goAway() // its streams finish, then it closes
		}
	}
}

// handler is the Server as the engine sees it: its engine.Handler,
// HalfCloseHandler and WritabilityHandler methods, kept off the Server's
// documented surface (a conversion, no allocation).
type handler Server

// OnOpen implements engine.Handler.
func (h *handler) OnOpen(c *engine.Conn) {
	cs := (*Server)(h).newConn(c)
	c.SetValue(cs)
	if alpnRefused(c) {
		_ = c.Close()
		return
	}
	cs.open()
}

// newConn counts a new connection and makes its state (on its loop). The
// caller attaches it to the connection and then calls open.
func (s *Server) newConn(c *engine.Conn) *conn {
	s.live.Add(1)
	cs := &conn{s: s, ls: s.stateFor(c.Loop()), c: c, flags: flagKeep}
	cs.p.lim = &s.cfg.limits
	return cs
}

// open starts serving a new connection: closed at once when the server is
// closing, else given until its first request's deadline.
func (cs *conn) open() {
	s := cs.s
	cs.ls.add(cs)
	cs.setState(http.StateNew)
	if p, overTLS := alpn(cs.c); p == "h2" {
		cs.set(flagSniff | flagH2) // HTTP/2 by ALPN: its preface must come
	} else if s.cfg.h2c && !overTLS {
		cs.set(flagSniff)
	}
	if s.closing.Load() {
		_ = cs.c.Close()
		return
	}
	// A new connection must send its first request's head in time, as in
	// net/http (the idle timeout when there is no header timeout).
	if s.cfg.readHeader > 0 {
		cs.setDeadline(s.cfg.readHeader)
	} else {
		cs.setDeadline(s.cfg.idle)
	}
}

// OnData implements engine.Handler.
func (*handler) OnData(c *engine.Conn, b []byte) { c.Value().(*conn).onData(b) }

// OnClose implements engine.Handler.
func (h *handler) OnClose(c *engine.Conn, err error) { (*Server)(h).closed(c.Value().(*conn), err) }

// closed ends a connection's state once it has closed.
func (s *Server) closed(cs *conn, err error) {
	cs.onClose(err)
	cs.setState(http.StateClosed)
	s.live.Add(-1)
	s.checkDrained()
}

// OnReadClosed implements engine.HalfCloseHandler: the client finished
// sending; what it sent is still answered.
func (*handler) OnReadClosed(c *engine.Conn) { c.Value().(*conn).onReadClosed() }

// OnWritabilityChanged implements engine.WritabilityHandler: a client that
// stops reading stops the server from serving it, bounding its output by the
// connection's watermarks.
func (*handler) OnWritabilityChanged(c *engine.Conn, writable bool) {
	c.Value().(*conn).onWritable(writable)
}
