package httpserver

import (
	"errors"
	"fmt"
	"math"
	"net/http"
	"os"
	"time"

	"github.com/ringloop/ringloop/internal/loopctl"
)

// The write-side timeouts and the adapter's per-request deadlines. Every
// deadline is a unix-nanosecond instant on the connection (0: none),
// checked on the loop's tick (loopState.onTick): the read side's in
// conn.deadline, the write deadline in conn.wdeadline, the stall bound in
// conn.stallAt.

var (
	// errWriteTimeout ends a response not written by its write deadline.
	errWriteTimeout = fmt.Errorf("httpserver: response not written by its write deadline (Timeouts.Write or SetWriteDeadline): %w", os.ErrDeadlineExceeded)
	// errWriteStall ends a response whose client read none of it for the
	// stall timeout.
	errWriteStall = fmt.Errorf("httpserver: the client read none of the response for Timeouts.WriteStall: %w", os.ErrDeadlineExceeded)
	// errReadDeadline ends a streamed body whose client sent nothing more
	// before the handler's read deadline (SetReadDeadline).
	errReadDeadline = fmt.Errorf("httpserver: request body not received by its read deadline (SetReadDeadline): %w", os.ErrDeadlineExceeded)
	// errRequestDone: a ResponseController call after its handler returned.
	errRequestDone = errors.New("httpserver: deadline set after the handler returned")
)

// startRequest runs once a request's headers are read: its write deadline
// starts (Timeouts.Write from now, as net/http's WriteTimeout, replacing
// what the previous request had) and no read deadline of a handler's is
// left over.
func (cs *conn) startRequest() {
	cs.wdeadline = 0
	if d := cs.s.cfg.write; d > 0 {
		cs.wdeadline = time.Now().UnixNano() + int64(d)
	}
	cs.clear(flagOwnReadDeadline)
	cs.rdeadline = 0
}

// checkDeadlines acts on the connection's deadlines that passed by now
// (unix ns), on the tick.
func (cs *conn) checkDeadlines(now int64) {
	if cs.h2 != nil {
		cs.h2.tick(now)
		return
	}
	if cs.deadline != 0 && cs.deadline <= now {
		cs.expire()
		return
	}
	if cs.has(flagClosed | flagLingering) {
		return
	}
	if cs.wdeadline != 0 && cs.wdeadline <= now {
		cs.wdeadline = 0
		if cs.writing() {
			cs.timeoutWrite(errWriteTimeout)
			return
		}
	}
	if cs.stallAt != 0 && cs.stallAt <= now {
		cs.stallAt = 0
		if !cs.c.Writable() {
			cs.timeoutWrite(errWriteStall)
		}
	}
}

// writing reports whether the current response's write has not ended: a
// request is read but not answered yet, its handler runs (or a deferred
// response is open), or bytes of it still wait for the socket.
func (cs *conn) writing() bool {
	return cs.has(flagBusy) || cs.p.headEnd != 0 || cs.c.Buffered() > 0
}

// timeoutWrite ends a response that missed its write deadline or whose
// client stopped reading: whoever writes it learns cause at once (the
// adapter's handler through its context and its Write, a Deferred through
// Flush and Finish, a body's reader through Read), and the connection is
// reset, its unsent bytes dropped (they could not be delivered).
func (cs *conn) timeoutWrite(cause error) {
	cs.wdeadline, cs.stallAt = 0, 0
	if sr := cs.inflight; sr != nil {
		sr.gone(cause)
	}
	if d := cs.deferred; d != nil {
		d.fail(cause)
	}
	if bs := cs.rb; bs != nil {
		bs.fail(cause)
	}
	cs.clear(flagKeep)
	cs.set(flagLingering)
	_ = cs.c.Abort()
}

// stall starts or stops the stall bound as the connection's output passes
// its high watermark or drains under its low one. It reads the clock, as
// setDeadline does, so that the bound never fires early.
func (cs *conn) stall(writable bool) {
	cs.stallAt = 0
	if d := cs.s.cfg.stall; !writable && d > 0 {
		cs.stallAt = time.Now().UnixNano() + int64(d)
	}
}

// readTimedOut ends a streamed body at the handler's read deadline: its
// reader gets what arrived before, then errReadDeadline; the handler still
// answers (net/http's behaviour) and the connection closes after the
// answer, what the client sends meanwhile dropped unread.
func (cs *conn) readTimedOut(bs *Body) {
	bs.receiving = false
	bs.fail(errReadDeadline)
	cs.set(flagBroken)
	cs.setPaused(true)
}

// SetWriteDeadline implements http.ResponseController's SetWriteDeadline
// for this request: the response must be written by t (the zero time: no
// write deadline), in place of Timeouts.Write. Past it the server acts as
// on Timeouts.Write (see Timeouts), up to one tick of the loop late. The
// next request's deadline is Timeouts.Write's again.
func (w *stdWriter) SetWriteDeadline(t time.Time) error { return w.sr.setDeadline(t, true) }

// SetReadDeadline implements http.ResponseController's SetReadDeadline
// for this request: a streamed body (Request.Body on a goroutine) must
// have arrived by t (the zero time: no deadline, not even Timeouts.Read's).
// Past it the body's Read returns the bytes that came before, then an
// error that wraps os.ErrDeadlineExceeded; the handler still answers, and
// the connection closes after its answer. Up to one tick of the loop late.
// A body already read whole (WithInlineHTTP, or one that has arrived)
// has nothing left to time out: nil, and no effect.
func (w *stdWriter) SetReadDeadline(t time.Time) error { return w.sr.setDeadline(t, false) }

// deadlineTask sets a deadline of an adapter request on its loop.
type deadlineTask struct {
	sr    *stdRequest
	at    int64 // unix ns; 0: none
	write bool
	err   error
	done  chan struct{}
}

// setDeadline sets the request's write or read deadline on its loop and
// returns once it is set.
func (sr *stdRequest) setDeadline(t time.Time, write bool) error {
	if sr.w.hijacked {
		return http.ErrHijacked
	}
	if sr.dead.Load() {
		return sr.goneErr()
	}
	task := &deadlineTask{sr: sr, at: unixNano(t), write: write}
	if sr.inline {
		task.apply()
		return task.err
	}
	task.done = make(chan struct{})
	if err := loopctl.Run(sr.loop, task); err != nil {
		return err
	}
	<-task.done
	return task.err
}

// unixNano is t as a deadline: 0 for the zero time, at least 1 (long past)
// for any other, at most math.MaxInt64 (never).
func unixNano(t time.Time) int64 {
	switch {
	case t.IsZero():
		return 0
	case t.Unix() >= math.MaxInt64/int64(time.Second)-1:
		return math.MaxInt64
	}
	return max(t.UnixNano(), 1)
}

func (t *deadlineTask) Run() {
	defer close(t.done)
	t.apply()
}

func (t *deadlineTask) apply() {
	sr := t.sr
	if sr.h2 != nil {
		t.err = sr.h2.setDeadline(sr, t.at, t.write)
		return
	}
	cs := sr.cs
	switch {
	case sr.dead.Load():
		t.err = sr.goneErr()
		return
	case cs.has(flagClosed) || cs.inflight != sr:
		t.err = errRequestDone
		return
	}
	past := t.at != 0 && t.at <= time.Now().UnixNano()
	if t.write {
		cs.wdeadline = t.at
		if past {
			cs.timeoutWrite(errWriteTimeout)
		}
		return
	}
	bs := cs.rb
	if bs == nil || !bs.receiving {
		return // the body is here whole: nothing left to time out
	}
	cs.set(flagOwnReadDeadline)
	cs.rdeadline = t.at
	if past {
		cs.readTimedOut(bs)
		return
	}
	cs.afterServe()
}
