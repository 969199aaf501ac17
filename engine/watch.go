package engine

import (
	"fmt"

	"golang.org/x/sys/unix"

	"github.com/ringloop/ringloop/internal/driver"
	"github.com/ringloop/ringloop/internal/taskq"
)

// FDHandler receives readiness of a watched fd (Netty's NioTask). Both
// methods run on the loop.
type FDHandler interface {
	// OnReady is called each time fd is ready for some of the watched
	// events; events is the ready mask (unix.POLLIN, ...).
	OnReady(w *Watch, events uint32)
	// OnUnregistered is called once when the watch ends: err is nil after
	// Stop or loop shutdown, else why the kernel ended it.
	OnUnregistered(w *Watch, err error)
}

// Watch is an fd the loop watches for readiness (a timerfd, a pipe, a
// signalfd, a foreign socket). The fd stays the caller's: Stop and shutdown
// do not close it.
type Watch struct {
	loop    *Loop
	fd      int
	events  uint32
	h       FDHandler
	idx     uint32
	gen     uint32
	armed   bool
	stopped bool
	err     error // why the watch ended, when the handler panicked
}

// RegisterFD starts watching fd for events on the loop. Called from another
// goroutine it hops onto the loop and waits for the registration.
func (l *Loop) RegisterFD(fd int, events uint32, h FDHandler) (*Watch, error) {
	if events == 0 || h == nil || fd < 0 {
		return nil, fmt.Errorf("engine: RegisterFD(%d, %#x, %T): want an fd, events and a handler", fd, events, h)
	}
	w := &Watch{loop: l, fd: fd, events: events, h: h}
	if err := l.onLoop(func() error { return w.arm() }); err != nil {
		return nil, err
	}
	return w, nil
}

func (w *Watch) arm() error {
	l := w.loop
	if l.State() >= ShuttingDown {
		return ErrShutdown
	}
	w.idx, w.gen = l.reg.add(w)
	w.armed = true
	l.drv.Poll(w.fd, makeTag(w.idx, w.gen, driver.OpPoll), w.events)
	return nil
}

// Stop ends the watch; OnUnregistered(nil) follows on the loop. Safe from any
// goroutine; stopping twice is a no-op.
func (w *Watch) Stop() error {
	return w.loop.onLoop(func() error {
		w.stop()
		return nil
	})
}

func (w *Watch) stop() {
	if w.stopped || !w.armed {
		return
	}
	w.stopped = true
	w.loop.drv.Cancel(w.fd, makeTag(w.idx, w.gen, driver.OpPoll))
}

func (w *Watch) complete(_ driver.OpKind, c *driver.Completion) {
	if c.Res >= 0 && !w.stopped {
		w.ready(uint32(c.Res))
	}
	if c.More {
		return
	}
	w.armed = false
	w.loop.reg.remove(w.idx, w.gen)
	err := w.err
	if err == nil && c.Res < 0 && c.Res != -int32(unix.ECANCELED) {
		err = c.Err()
	}
	w.unregistered(err)
}

// unregistered calls OnUnregistered, the last callback: a panic there is
// only reported.
func (w *Watch) unregistered(err error) {
	defer w.loop.recoverHook("OnUnregistered")
	w.h.OnUnregistered(w, err)
}

// ready calls OnReady; a panic there ends the watch, and OnUnregistered
// receives it as an error (Netty's NioTask state 2).
func (w *Watch) ready(events uint32) {
	defer func() {
		if p := recover(); p != nil {
			w.loop.reportPanic("fd handler", p)
			w.err = fmt.Errorf("engine: OnReady: %w", taskq.NewPanicError(p))
			w.stop()
		}
	}()
	w.h.OnReady(w, events)
}

func (w *Watch) shutdown() {
	if w.err == nil {
		w.err = w.loop.fault // nil unless the loop's own code panicked
	}
	w.stop()
}

func (w *Watch) abandon() {
	w.loop.reg.remove(w.idx, w.gen)
	w.unregistered(w.loop.fault)
}
