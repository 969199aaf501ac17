package netconn

import (
	"sync"
	"time"
)

// deadline is one direction's deadline: a channel closed when it passes,
// re-made when the deadline moves again (SetDeadline may be called at any
// time, from any goroutine, while a Read or Write waits on it). One timer is
// re-armed for every change, so moving a deadline allocates nothing.
type deadline struct {
	mu    sync.Mutex
	timer *time.Timer
	when  time.Time // zero: none
	ch    chan struct{}
	shut  bool // ch is closed
}

func newDeadline() *deadline { return &deadline{ch: make(chan struct{})} }

// deadlines are a Conn's or a PacketConn's read and write deadlines; their
// Set*Deadline methods are those of net.Conn and net.PacketConn.
type deadlines struct{ rdl, wdl *deadline }

func newDeadlines() deadlines { return deadlines{newDeadline(), newDeadline()} }

// SetDeadline sets the read and write deadlines.
func (d deadlines) SetDeadline(t time.Time) error {
	d.rdl.set(t)
	d.wdl.set(t)
	return nil
}

// SetReadDeadline sets the time after which a read (Read, ReadFrom) fails
// with os.ErrDeadlineExceeded, also one already waiting; zero means none.
func (d deadlines) SetReadDeadline(t time.Time) error { d.rdl.set(t); return nil }

// SetWriteDeadline sets the time after which a write still waiting for
// room fails with os.ErrDeadlineExceeded; zero means none.
func (d deadlines) SetWriteDeadline(t time.Time) error { d.wdl.set(t); return nil }

// stop releases both deadlines' timers.
func (d deadlines) stop() {
	d.rdl.stop()
	d.wdl.stop()
}

// set moves the deadline; the zero time means none.
func (d *deadline) set(t time.Time) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.when = t
	if d.timer != nil {
		d.timer.Stop()
	}
	if d.shut {
		d.ch, d.shut = make(chan struct{}), false
	}
	if t.IsZero() {
		return
	}
	wait := time.Until(t)
	if wait <= 0 {
		close(d.ch)
		d.shut = true
		return
	}
	if d.timer == nil {
		d.timer = time.AfterFunc(wait, d.fire)
	} else {
		d.timer.Reset(wait)
	}
}

// fire closes the channel if the deadline has passed; a callback left over
// from an earlier setting finds a later deadline and does nothing.
func (d *deadline) fire() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.shut || d.when.IsZero() {
		return
	}
	if wait := time.Until(d.when); wait > 0 {
		d.timer.Reset(wait) // the wall clock moved: wait again
		return
	}
	close(d.ch)
	d.shut = true
}

// done returns the channel that closes when the deadline passes.
func (d *deadline) done() <-chan struct{} {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.ch
}

// passed reports whether the deadline has passed.
func (d *deadline) passed() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.shut
}

// stop releases the timer (the connection is closed).
func (d *deadline) stop() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.timer != nil {
		d.timer.Stop()
	}
}
