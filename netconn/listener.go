package netconn

import (
	"context"
	"net"
	"sync"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/internal/loopctl"
	"github.com/ringloop/ringloop/tasks"
)

// Listener is a net.Listener whose socket a ringloop loop accepts on; each
// accepted connection is served by the loop the chooser picks (a group's
// next loop, or the one loop) and queued, bounded, for Accept. When Accept
// falls behind by the queue's size the loop stops accepting until it catches
// up, and new connections wait in the kernel's backlog.
type Listener struct {
	ln  *engine.Listener
	cfg *config

	amu sync.Mutex // one Accept at a time

	mu       sync.Mutex
	queue    []*Conn // accepted, not yet returned by Accept: queue[head:]
	head     int
	paused   bool  // accepting should be paused
	toggling bool  // a task applying paused is queued
	closed   bool  // Close was called
	lost     error // the listening socket closed under us (its loop shut down)

	ready   chan struct{}
	done    chan struct{}
	toggleT listenerTask
}

// listenerTask applies the pause wish on the accepting loop's control ring
// (package loopctl), which a user's engine.WithMaxPendingTasks cannot fill:
// a lost resume would stop accepting for good. It reads the latest wish
// there rather than carry one, so a pause and a resume that cross cannot
// land in the wrong order.
type listenerTask struct{ l *Listener }

// Run applies the latest paused state on the accepting loop.
func (t *listenerTask) Run() {
	l := t.l
	l.mu.Lock()
	l.toggling = false
	paused := l.paused
	l.mu.Unlock()
	if paused {
		l.ln.PauseAccept()
	} else {
		l.ln.ResumeAccept()
	}
}

// Listen listens on addr ("tcp", "tcp4", "tcp6" or "unix"). loops is one
// *engine.Loop or a *loopgroup.Group: its next loop accepts, and each
// connection is served by loops.Next() (handed over with MSG_RING where the
// kernel has it).
func Listen(loops engine.Loops, network, addr string, opts ...Option) (*Listener, error) {
	cfg, err := newConfig(opts)
	if err != nil {
		return nil, err
	}
	return listen(loops, cfg, func(l *engine.Loop, h engine.Handler, copts []engine.ConnOption) (*engine.Listener, error) {
		return engine.Listen(l, network, addr, h, copts...)
	})
}

// listen opens the engine listener with open, in a task on the accepting
// loop, so the Listener is complete before any accept is processed.
func listen(loops engine.Loops, cfg *config,
	open func(*engine.Loop, engine.Handler, []engine.ConnOption) (*engine.Listener, error)) (*Listener, error) {
	l := &Listener{cfg: cfg, ready: make(chan struct{}, 1), done: make(chan struct{})}
	l.toggleT.l = l
	h := &handler{ln: l, cfg: cfg}
	copts := append([]engine.ConnOption{engine.WithWorkers(loops)}, cfg.conn...)
	loop := loops.Next()
	_, err := engine.Submit(loop, func() (*engine.Listener, error) {
		ln, err := open(loop, h, copts)
		if err == nil {
			l.ln, h.network = ln, ln.Addr().Network()
		}
		return ln, err
	}).Await(context.Background())
	if err != nil {
		return nil, err
	}
	l.ln.Closed().AddListener(tasks.Inline, func(tasks.Future[struct{}]) { l.socketClosed() })
	return l, nil
}

// socketClosed wakes Accept once the listening socket is closed, by Close or
// by its loop shutting down.
func (l *Listener) socketClosed() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.closed && l.lost == nil {
		l.lost = engine.ErrShutdown
		signal(l.ready)
	}
}

// Accept waits for the next connection.
func (l *Listener) Accept() (net.Conn, error) {
	l.amu.Lock()
	defer l.amu.Unlock()
	for {
		l.mu.Lock()
		if l.closed {
			l.mu.Unlock()
			return nil, &net.OpError{Op: "accept", Net: l.Addr().Network(), Addr: l.Addr(), Err: net.ErrClosed}
		}
		if l.head < len(l.queue) {
			nc := l.queue[l.head]
			l.queue[l.head] = nil
			l.head++
			if l.head == len(l.queue) {
				l.queue, l.head = l.queue[:0], 0
			}
			kick := l.paused && len(l.queue)-l.head <= l.cfg.acceptQueue/2
			l.paused = l.paused && !kick
			kick = kick && !l.toggling
			l.toggling = l.toggling || kick
			l.mu.Unlock()
			if kick {
				// Refused only once the loop has shut down, which closed
				// the listening socket.
				_ = loopctl.Run(l.ln.Loop(), &l.toggleT)
			}
			return nc, nil
		}
		if err := l.lost; err != nil {
			l.mu.Unlock()
			return nil, &net.OpError{Op: "accept", Net: l.Addr().Network(), Addr: l.Addr(), Err: err}
		}
		l.mu.Unlock()
		select {
		case <-l.ready:
		case <-l.done:
		}
	}
}

// push queues an accepted connection (on the loop serving it).
func (l *Listener) push(nc *Conn) {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		_ = nc.Close()
		return
	}
	l.queue = append(l.queue, nc)
	kick := !l.paused && len(l.queue)-l.head >= l.cfg.acceptQueue
	l.paused = l.paused || kick
	kick = kick && !l.toggling
	l.toggling = l.toggling || kick
	l.mu.Unlock()
	signal(l.ready)
	if kick {
		_ = loopctl.Run(l.ln.Loop(), &l.toggleT) // as in Accept
	}
}

// Close stops accepting, closes the connections not yet accepted and the
// listening socket, and waits for the socket to close (unless called on
// the accepting loop). A pending Accept returns net.ErrClosed.
func (l *Listener) Close() error {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return &net.OpError{Op: "close", Net: l.Addr().Network(), Addr: l.Addr(), Err: net.ErrClosed}
	}
	l.closed = true
	close(l.done)
	pending := l.queue[l.head:]
	l.queue, l.head = nil, 0
	lost := l.lost
	l.mu.Unlock()
	for _, nc := range pending {
		_ = nc.Close()
	}
	if lost != nil {
		return nil // the loop closed the socket already
	}
	return l.ln.Close()
}

// Addr returns the listener's address.
func (l *Listener) Addr() net.Addr { return l.ln.Addr() }

// Engine returns the engine listener underneath (for its hand-off
// statistics, for instance).
func (l *Listener) Engine() *engine.Listener { return l.ln }
