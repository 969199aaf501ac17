package looptls

import (
	"sync"
	"sync/atomic"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/internal/loopctl"
)

// asyncWriter holds plaintext written off the loop until the loop encrypts
// it. Records are encrypted on the loop only: crypto/tls numbers them in
// the order it writes them, and ciphertext from two goroutines could reach
// the engine connection out of that order.
type asyncWriter struct {
	c      *Conn
	mu     sync.Mutex
	buf    []byte
	spare  []byte
	queued bool
	err    error
	held   bool // HoldAsync: Run leaves buf where it is (loop only)
}

// AsyncWrite copies p and has the loop encrypt and send it; safe from any
// goroutine. Writes from one goroutine keep their order and go before a
// later Close's close_notify. It returns engine.ErrWriteBufferFull,
// accepting nothing, when the plaintext held plus the ciphertext waiting to
// be sent would pass the async write limit (WithAsyncWriteLimit), and
// ErrConnClosed once the connection is closing.
func (c *Conn) AsyncWrite(p []byte) error {
	a := &c.async
	a.mu.Lock()
	if a.err != nil {
		a.mu.Unlock()
		return a.err
	}
	if len(p) == 0 {
		a.mu.Unlock()
		return nil
	}
	if len(a.buf)+len(p)+c.ec.Buffered() > c.w.o.asyncLimit {
		a.mu.Unlock()
		return engine.ErrWriteBufferFull
	}
	a.buf = append(a.buf, p...)
	first := !a.queued
	a.queued = true
	a.mu.Unlock()
	if !first {
		return nil
	}
	if err := loopctl.Run(c.ec.Loop(), a); err != nil {
		a.mu.Lock()
		a.buf, a.queued = a.buf[:0], false
		a.mu.Unlock()
		return err
	}
	return nil
}

// Run encrypts the accepted plaintext on the loop.
func (a *asyncWriter) Run() {
	if !a.held { // held: queued stays set, ReleaseAsync flushes
		a.flush()
	}
}

// HoldAsync keeps the plaintext AsyncWrite accepts out of the stream until
// ReleaseAsync, as engine.Conn.HoldAsync: held bytes count against the
// async write limit, and a close still sends them ahead of close_notify.
// Loop only: elsewhere it does nothing.
func (c *Conn) HoldAsync() {
	if c.ec.Loop().InEventLoop() {
		c.async.held = true
	}
}

// ReleaseAsync ends HoldAsync: the held plaintext is encrypted and written
// now, behind what the loop wrote meanwhile. Loop only.
func (c *Conn) ReleaseAsync() {
	if !c.ec.Loop().InEventLoop() || !c.async.held {
		return
	}
	c.async.held = false
	c.async.flush()
}

// DiscardAsync drops the plaintext AsyncWrite accepted that the loop has
// not yet encrypted and returns how many bytes it was. Loop only:
// elsewhere it returns 0.
func (c *Conn) DiscardAsync() int {
	if !c.ec.Loop().InEventLoop() {
		return 0
	}
	a := &c.async
	a.mu.Lock()
	n := len(a.buf)
	a.buf, a.queued = a.buf[:0], false
	a.mu.Unlock()
	return n
}

func (a *asyncWriter) flush() {
	a.mu.Lock()
	b := a.buf
	a.buf, a.spare, a.queued = a.spare[:0], nil, false
	a.mu.Unlock()
	if len(b) == 0 {
		return
	}
	_, _ = a.c.write(b) // closing: the bytes are lost, and OnClose says why
	if cap(b) <= maxIdleBuf {
		a.mu.Lock()
		if a.spare == nil {
			a.spare = b[:0]
		}
		a.mu.Unlock()
	}
}

// close makes AsyncWrite refuse with err from now on.
func (a *asyncWriter) close(err error) {
	a.mu.Lock()
	if a.err == nil {
		a.err = err
	}
	a.buf, a.spare = nil, nil
	a.mu.Unlock()
}

// Requests from other goroutines.
const (
	reqClose uint32 = 1 << iota
	reqAbort
	reqPause
	reqResume
	reqCloseWrite
	reqQueued
)

// ctl carries Close, CloseWrite, Abort, PauseRead and ResumeRead asked off the loop to
// it: one pre-built task, queued at most once at a time.
type ctl struct {
	c    *Conn
	bits atomic.Uint32
	err  atomic.Pointer[error]
}

func (t *ctl) request(r uint32) error {
	for {
		old := t.bits.Load()
		nw := old | r | reqQueued
		switch r {
		case reqPause:
			nw &^= reqResume
		case reqResume:
			nw &^= reqPause
		}
		if !t.bits.CompareAndSwap(old, nw) {
			continue
		}
		if old&reqQueued != 0 {
			return nil
		}
		return loopctl.Run(t.c.ec.Loop(), t)
	}
}

func (t *ctl) Run() {
	c, r := t.c, t.bits.Swap(0)
	switch {
	case r&reqResume != 0:
		c.ResumeRead()
	case r&reqPause != 0:
		c.PauseRead()
	}
	if r&reqCloseWrite != 0 {
		c.closeWrite()
	}
	if r&reqClose != 0 {
		err := error(ErrConnClosed)
		if p := t.err.Load(); p != nil {
			err = *p
		}
		c.closeWith(err)
	}
	if r&reqAbort != 0 {
		c.abortWith(engine.ErrAborted)
	}
}
