package httpserver

import (
	"errors"
	"sync/atomic"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/internal/loopctl"
)

// Deferred is a fast-API response finished after the handler returned,
// from any goroutine: the way to answer after blocking work done elsewhere
// (an executor, a database client) without stalling the loop. It has
// Response's setters; Flush streams what is written so far, Finish sends the
// rest. One goroutine at a time may use it.
//
// While a response is deferred its connection serves nothing else: requests
// pipelined after it wait (their responses follow it, in order), reading
// pauses, and the connection's read timeouts do not run (the server is the
// one behind). Timeouts.Write and Timeouts.WriteStall do: past either,
// Flush and Finish fail with an error wrapping os.ErrDeadlineExceeded and
// the connection is reset. Without a write timeout, a response never
// finished holds its connection until the client goes away or the server
// closes it.
type Deferred struct {
	w        Response // its own buffers; w.cs is set, only the loop reads it
	loop     *engine.Loop
	finished atomic.Bool
	gone     atomic.Bool           // the connection closed
	why      atomic.Pointer[error] // a timeout that ended it (deadline.go), set before gone
	ack      chan error            // Flush: the loop took the bytes (and the client drained)
	waiting  bool                  // loop side: a Flush waits for the connection to drain
}

// ErrFinished is returned by Deferred.Finish called twice.
var ErrFinished = errors.New("httpserver: deferred response already finished")

// errDeferred: Response.Flush after Defer (the Deferred owns the response).
var errDeferred = errors.New("httpserver: response deferred: use its Deferred")

// Defer keeps the response open after the handler returns and hands it
// over: the status, headers and body set so far carry over to the returned
// Deferred, which the caller must Finish; w is not to be used after. The
// handler must copy what it needs from the request, which is valid only
// during the call. Calling Defer again returns the same Deferred.
func (w *Response) Defer() *Deferred {
	if w.deferred != nil {
		return w.deferred
	}
	cs := w.cs
	d := &Deferred{loop: cs.c.Loop()}
	d.w = Response{
		status: w.status, cl: w.cl, closeConn: w.closeConn, started: w.started,
		chunked: w.chunked, noBody: w.noBody, minor: w.minor, clientKeep: w.clientKeep,
		hdr: append([]byte(nil), w.hdr...), body: append([]byte(nil), w.body...),
		cs: cs, st: w.st,
	}
	w.deferred = d
	if w.st != nil {
		w.st.deferred = d // the stream's, not the connection's: others go on
		return d
	}
	cs.deferred = d
	cs.set(flagBusy)
	return d
}

// SetStatus sets the status code (default 200, or what the handler set);
// no effect once the handler flushed the head.
func (d *Deferred) SetStatus(code int) { d.w.SetStatus(code) }

// AddHeader adds a response header line; see Response.AddHeader.
func (d *Deferred) AddHeader(name, value string) { d.w.AddHeader(name, value) }

// SetContentLength declares the body length; see Response.SetContentLength.
func (d *Deferred) SetContentLength(n int64) { d.w.SetContentLength(n) }

// Write appends p to the body.
func (d *Deferred) Write(p []byte) (int, error) { return d.w.Write(p) }

// WriteString appends s to the body.
func (d *Deferred) WriteString(s string) (int, error) { return d.w.WriteString(s) }

// Flush sends the head (the first time) and the body written so far, from
// the calling goroutine, and returns once the connection can take more:
// while the client reads slower than the body is produced, Flush waits
// (the connection's write watermarks bound what is buffered). The body is
// chunked for HTTP/1.1 unless a length was set, close-delimited for
// HTTP/1.0; Finish ends it.
func (d *Deferred) Flush() error {
	if d.finished.Load() {
		return ErrFinished
	}
	if d.gone.Load() {
		return d.goneErr()
	}
	if d.ack == nil {
		d.ack = make(chan error, 1)
	}
	if err := loopctl.Run(d.loop, (*deferredFlush)(d)); err != nil {
		return err
	}
	return <-d.ack
}

// deferredFlush is the loop's side of Deferred.Flush.
type deferredFlush Deferred

// Run writes what the goroutine flushed and acknowledges it once the
// connection is under its high watermark.
func (f *deferredFlush) Run() {
	d := (*Deferred)(f)
	if st := d.w.st; st != nil {
		st.deferredFlush(d)
		return
	}
	cs := d.w.cs
	if cs.has(flagClosed) || cs.deferred != d || d.gone.Load() {
		d.ack <- d.goneErr()
		return
	}
	if err := d.w.Flush(); err != nil {
		d.ack <- err
		return
	}
	if cs.c.Writable() {
		d.ack <- nil
		return
	}
	d.waiting = true
}

// release wakes a Flush waiting for the connection (err: why it ended).
func (d *Deferred) release(err error) {
	if d.waiting {
		d.waiting = false
		d.ack <- err
	}
}

// fail ends the response for cause, a timeout (deadline.go): a waiting
// Flush returns it, and so do later Flush and Finish calls.
func (d *Deferred) fail(cause error) {
	d.why.CompareAndSwap(nil, &cause)
	d.gone.Store(true)
	d.release(cause)
}

// goneErr is what Flush and Finish return once the connection is gone.
func (d *Deferred) goneErr() error {
	if p := d.why.Load(); p != nil {
		return *p
	}
	return errConnGone
}

// Finish sends the response (framed as Response frames it when its handler
// returns) and lets the connection go on with its next request. The
// Deferred must not be used after. It returns an error when the client has
// already gone (nothing is sent), ErrFinished on a second call, or the
// ErrShutdown once the loop has shut down.
func (d *Deferred) Finish() error {
	if d.finished.Swap(true) {
		return ErrFinished
	}
	if d.gone.Load() {
		return d.goneErr()
	}
	return loopctl.Run(d.loop, (*deferredFinish)(d))
}

// deferredFinish is the loop's side of Deferred.Finish: a type of its own,
// so that Deferred has no Run method a goroutine could call off the loop.
type deferredFinish Deferred

// Run sends the response on the loop and resumes the connection.
func (f *deferredFinish) Run() {
	d := (*Deferred)(f)
	if st := d.w.st; st != nil {
		st.deferredFinish(d)
		return
	}
	cs := d.w.cs
	if cs.has(flagClosed) || cs.deferred != d {
		return
	}
	cs.endBody()
	d.w.finish()
	cs.deferred = nil
	cs.clear(flagBusy)
	if cs.responded() {
		cs.serveBuffered()
		cs.afterServe()
	}
}
