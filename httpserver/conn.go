package httpserver

import (
	"cmp"
	"context"
	"crypto/tls"
	"io"
	"net/http"
	"time"

	"github.com/ringloop/ringloop/engine"
)

// lingerTime is how long a connection refused with an error status keeps
// reading (and dropping) what the client still sends, so that closing does
// not reset the connection before the client has read the error.
const lingerTime = 500 * time.Millisecond

// conn is the server's state for one connection; only its loop touches it,
// except an adapter request's goroutine, which reaches it through tasks.
type conn struct {
	s   *Server
	ls  *loopState
	c   *engine.Conn // the connection, over TLS or not (its transport is looptls's)
	idx int

	buf []byte // received bytes not yet consumed; the current request starts at buf[0]
	p   parser

	flags     connFlags // the connection's state, one bit each
	reqStart  int64     // unix ns when the current request's first byte was read
	deadline  int64     // unix ns; 0: none
	wdeadline int64     // unix ns: the current response's write deadline (deadline.go); 0: none
	rdeadline int64     // unix ns: the handler's read deadline for a streamed body (flagOwnReadDeadline); 0: none
	stallAt   int64     // unix ns: when output over the high watermark since is cut (Timeouts.WriteStall); 0: none
	inflight  *stdRequest
	rb        *Body                // the current request's streamed body, until its response ends
	deferred  *Deferred            // fast API: the response a handler finishes later
	upgrade   engine.Handler       // fast API: Upgrade's handler, owed the connection
	base      context.Context      // adapter: the parent of every request's context
	state     http.ConnState       // as last reported to WithConnState's hook
	remote    string               // adapter: the client's address, formatted once
	tls       *tls.ConnectionState // over TLS: the handshake's outcome, made once (tlsState)
	h2        *h2Conn              // the connection speaks HTTP/2 (h2conn.go)
}

// connFlags is a connection's state, one bit each (as engine keeps a
// connection's), read and written on its loop only.
type connFlags uint16

const (
	flagKeep            connFlags = 1 << iota // the connection stays open after the current response
	flagBusy                                  // an adapter request or a deferred response is in flight
	flagBlocked                               // output is above the high watermark: serving waits
	flagPaused                                // reading is paused
	flagReadEOF                               // the client shut down its write side
	flagMore                                  // bytes follow the current request: it is not the last
	flagLingering                             // refused: dropping input until the close
	flagBroken                                // the connection ends after the current response (a streamed body broke or is left unread): input is dropped
	flagClosed                                // OnClose ran
	flagContinued                             // no "100 Continue" may be sent for the current request: sent, or the response began
	flagStarted                               // the current request has begun (reqStart is set)
	flagOwnReadDeadline                       // the handler set the streamed body's read deadline (rdeadline), in place of Timeouts.Read
	flagSniff                                 // the first bytes may be HTTP/2's client preface (WithH2C)
	flagH2                                    // ALPN chose HTTP/2: the first bytes must be its client preface
)

func (cs *conn) has(f connFlags) bool { return cs.flags&f != 0 }
func (cs *conn) set(f connFlags)      { cs.flags |= f }
func (cs *conn) clear(f connFlags)    { cs.flags &^= f }

// setTo sets f when on is true and clears it otherwise.
func (cs *conn) setTo(f connFlags, on bool) {
	if on {
		cs.set(f)
	} else {
		cs.clear(f)
	}
}

// setState reports a state change to WithConnState's hook.
func (cs *conn) setState(st http.ConnState) {
	if fn := cs.s.cfg.connState; fn != nil && (cs.state != st || st == http.StateNew) {
		cs.state = st
		fn(cs.c, st)
	}
}

// maxPending bounds the bytes buffered while the connection cannot serve
// (a request in flight, output blocked) before reading pauses.
const maxPending = 64 << 10

// idle reports whether the connection waits for a request with nothing
// buffered and nothing in flight.
func (cs *conn) idle() bool {
	return !cs.has(flagBusy) && len(cs.buf) == 0 && cs.c.Buffered() == 0
}

// setDeadline sets the deadline d from now. It reads the clock rather than
// taking the loop's tick time, which may be a tick old: a deadline counted
// from there would fire up to a tick early.
func (cs *conn) setDeadline(d time.Duration) {
	if d > 0 {
		cs.deadline = time.Now().UnixNano() + int64(d)
	} else {
		cs.deadline = 0
	}
}

// expire runs when the deadline passed: slow or idle clients are closed
// without a response, as net/http does.
func (cs *conn) expire() {
	cs.deadline = 0
	if bs := cs.rb; bs != nil && bs.receiving {
		if cs.has(flagOwnReadDeadline) {
			cs.readTimedOut(bs) // the handler's deadline: it still answers
			return
		}
		// A streamed body's client sent nothing for the read timeout.
		bs.fail(bodyTimeout)
		_ = cs.c.Close()
		return
	}
	if cs.has(flagBusy) {
		return
	}
	_ = cs.c.Close()
}

func (cs *conn) onData(b []byte) {
	if cs.h2 != nil {
		cs.h2.onData(b)
		return
	}
	if cs.has(flagSniff) && cs.sniffH2(b) {
		return
	}
	if cs.has(flagLingering | flagClosed | flagBroken) {
		return
	}
	if bs := cs.rb; bs != nil && bs.receiving {
		b = b[bs.feed(b):]
		if bs.receiving || cs.has(flagLingering|flagBroken) {
			cs.afterServe()
			return
		}
		if !cs.has(flagBusy) {
			cs.rb = nil // a body dropped after its response: the connection goes on
		}
		if len(b) == 0 {
			cs.serveBuffered()
			cs.afterServe()
			return
		}
	}
	if len(cs.buf) == 0 && !cs.has(flagBusy|flagBlocked) {
		n := cs.serve(b)
		if n < len(b) && !cs.has(flagLingering|flagClosed) {
			cs.buf = append(cs.buf, b[n:]...)
		}
	} else {
		if cs.has(flagBusy) {
			cs.set(flagMore)
		}
		cs.buf = append(cs.buf, b...)
		cs.serveBuffered()
	}
	cs.afterServe()
}

// serveBuffered serves the requests complete in buf and keeps the rest.
func (cs *conn) serveBuffered() {
	if cs.has(flagBusy|flagBlocked) || len(cs.buf) == 0 || cs.receiving() {
		return
	}
	n := cs.serve(cs.buf)
	if cs.has(flagLingering | flagClosed) {
		cs.buf = cs.buf[:0]
		return
	}
	rest := copy(cs.buf, cs.buf[n:])
	cs.buf = cs.buf[:rest]
	if cap(cs.buf) > 4*maxPending && rest < maxPending {
		cs.buf = append([]byte(nil), cs.buf...)
	}
}

// afterServe sets the deadline for what the connection waits for now and
// bounds what it buffers. Deadlines count from the request's first byte, so
// a client trickling bytes cannot push them back.
func (cs *conn) afterServe() {
	if cs.has(flagClosed | flagLingering) {
		return
	}
	cfg := cs.s.cfg
	if bs := cs.rb; bs != nil && bs.receiving {
		// A streamed body: reading follows its window, and while it has
		// room the client is the one behind, given the read timeout
		// between its bytes (an upload's length is not bounded by time),
		// unless its handler set a deadline of its own.
		cs.deadline = 0
		switch {
		case cs.has(flagOwnReadDeadline):
			cs.deadline = cs.rdeadline
		case !bs.stalled:
			cs.setDeadline(cfg.read)
		}
		cs.setPaused(bs.stalled)
		return
	}
	if cs.has(flagBusy | flagBlocked) {
		cs.deadline = 0 // the server is the one behind
		if (len(cs.buf) > maxPending || cs.deferred != nil) && !cs.has(flagPaused) {
			cs.set(flagPaused)
			cs.c.PauseRead()
		}
		return
	}
	if len(cs.buf) == 0 {
		cs.clear(flagStarted)
		cs.setDeadline(cfg.idle)
		if cs.state == http.StateActive {
			cs.setState(http.StateIdle)
		}
	} else {
		cs.setState(http.StateActive)
		if !cs.has(flagStarted) {
			cs.reqStart = time.Now().UnixNano()
			cs.set(flagStarted)
		}
		d := cfg.read
		if cs.p.headEnd == 0 && cfg.readHeader > 0 && (d <= 0 || cfg.readHeader < d) {
			d = cfg.readHeader
		}
		cs.deadline = 0
		if d > 0 {
			cs.deadline = cs.reqStart + int64(d)
		}
	}
	cs.setPaused(false)
	if cs.has(flagReadEOF) {
		_ = cs.c.Close()
	}
}

// setPaused pauses or resumes reading the connection.
func (cs *conn) setPaused(pause bool) {
	if pause != cs.has(flagPaused) {
		cs.setTo(flagPaused, pause)
		if pause {
			cs.c.PauseRead()
		} else {
			cs.c.ResumeRead()
		}
	}
}

// receiving reports whether the connection's input is the current
// request's streamed body.
func (cs *conn) receiving() bool { return cs.rb != nil && cs.rb.receiving }

// serve parses and serves the requests complete in b, in order, and returns
// the bytes consumed. It stops at an incomplete request, when a request goes
// to a goroutine, when output is blocked, or when the connection is to close.
func (cs *conn) serve(b []byte) int {
	off := 0
	for off < len(b) && !cs.has(flagBusy|flagBlocked|flagLingering|flagClosed) && !cs.receiving() {
		rb := b[off:]
		p := &cs.p
		if p.headEnd == 0 {
			done, err := p.head(rb)
			if err != nil {
				cs.refuse(err)
				return len(b)
			}
			if !done {
				return off
			}
			cs.startRequest()
			cs.clear(flagContinued)
			stream := cs.streams(rb)
			limit := int64(cs.s.cfg.maxBody)
			if stream {
				limit = cs.s.cfg.maxStreamBody
			}
			if err := p.limitBody(limit); err != nil {
				cs.refuse(err)
				return len(b)
			}
			if stream {
				n := cs.serveStreamed(rb)
				off += n
				if !cs.responded() {
					return len(b)
				}
				continue
			}
			cs.maybeContinue()
		}
		switch p.kind {
		case bodyLength:
			if len(rb) < int(p.body.hi) {
				return off
			}
		case bodyChunked:
			done, err := p.chunks(rb)
			if err != nil {
				cs.refuse(err)
				return len(b)
			}
			if !done {
				return off
			}
		}
		end := p.end()
		cs.setTo(flagMore, len(rb) > end)
		cs.dispatch(rb[:end], nil)
		off += end
		if cs.upgrade != nil {
			cs.handOver(b[off:])
			return len(b)
		}
		p.reset()
		cs.clear(flagStarted)
		if !cs.responded() {
			return len(b)
		}
	}
	return off
}

// streams reports whether the request whose head starts b gets its body
// as a stream: every request with a body the adapter runs on a goroutine,
// and those a fast handler asks for (BodyStreamer). The adapter's inline
// mode and other fast handlers get whole bodies.
func (cs *conn) streams(b []byte) bool {
	p := &cs.p
	if p.kind == bodyNone {
		return false
	}
	if cs.s.fast == nil {
		return !cs.s.cfg.inline
	}
	st, ok := cs.s.fast.(BodyStreamer)
	if !ok {
		return false
	}
	r := &Request{b: b[:p.headEnd], p: p, conn: cs.c}
	return st.StreamBody(r)
}

// serveStreamed serves a request whose body streams: its handler runs once
// the head is here, with what of the body came with it. It returns the
// bytes of b the request took.
func (cs *conn) serveStreamed(b []byte) int {
	p := &cs.p
	bs, n := cs.startBody(b)
	cs.rb = bs
	cs.dispatch(b[:p.headEnd], bs)
	p.reset()
	cs.clear(flagStarted)
	return n
}

// handOver gives the connection to Upgrade's handler with the bytes that
// followed the request, and forgets it. Should the connection be closing
// already, it is aborted and the server's OnClose sees it out as usual.
func (cs *conn) handOver(pending []byte) {
	h := cs.upgrade
	cs.upgrade = nil
	cs.release() // the new handler starts with no value
	if err := cs.c.SetHandler(h, pending); err != nil {
		cs.hold() // still the server's: its OnClose comes
		cs.set(flagLingering)
		_ = cs.c.Abort()
		return
	}
	cs.forget()
}

// release removes cs as the connection's value, once another handler has
// the connection (Upgrade, Hijack): the server's state for it, parser
// included, is not kept alive by it.
func (cs *conn) release() {
	if cs.c.Value() == cs {
		cs.c.SetValue(nil)
	}
}

// hold makes cs the connection's value again: a hand-over that failed
// leaves the connection the server's.
func (cs *conn) hold() { cs.c.SetValue(cs) }

// forget lets go of a connection another handler took (Upgrade, Hijack):
// no callback of the server's reaches it any more, it no longer counts for
// Shutdown, and it reads again if the server had paused it.
func (cs *conn) forget() {
	cs.buf, cs.inflight, cs.deadline, cs.rb = nil, nil, 0, nil
	cs.wdeadline, cs.stallAt = 0, 0
	cs.release()
	cs.clear(flagBusy)
	cs.set(flagClosed)
	cs.ls.remove(cs)
	cs.setState(http.StateHijacked)
	cs.setPaused(false)
	cs.s.live.Add(-1)
	cs.s.checkDrained()
}

// responded follows a complete response: a connection not kept alive closes
// (pipelined bytes after a closing response are dropped), one kept alive
// notes whether the client is behind. It reports whether the connection
// goes on to its next request.
func (cs *conn) responded() bool {
	if !cs.has(flagKeep) || cs.has(flagBroken) && !cs.has(flagBusy) {
		cs.set(flagLingering)
		_ = cs.c.Close()
		return false
	}
	if !cs.c.Writable() {
		cs.set(flagBlocked)
	}
	return true
}

// maybeContinue answers "Expect: 100-continue" once the head is complete,
// whether or not the body came with it (as net/http does once the handler
// reads the body).
func (cs *conn) maybeContinue() {
	if cs.has(flagContinued) || !cs.p.wantsContinue() {
		return
	}
	cs.set(flagContinued)
	_, _ = cs.c.Write(continueLine)
}

var continueLine = []byte("HTTP/1.1 100 Continue\r\n\r\n")

// dispatch serves one request: its bytes are b, the whole request or, with
// a streamed body bs, its head.
func (cs *conn) dispatch(b []byte, bs *Body) {
	cs.setState(http.StateActive)
	ls := cs.ls
	r := &ls.req
	r.b, r.p, r.conn, r.stream = b, &cs.p, cs.c, bs
	if cs.s.fast != nil {
		w := &ls.resp
		w.reset(cs, r)
		if cs.serveFast(w, r) && w.deferred == nil {
			cs.endBody()
			w.finish()
		}
		w.cs, w.deferred = nil, nil
	} else {
		cs.serveStd(r)
	}
	r.b, r.p, r.conn, r.stream = nil, nil, nil, nil
}

// serveFast runs the fast handler; a panic is logged and resets the
// connection (as net/http does), and serveFast returns false.
func (cs *conn) serveFast(w *Response, r *Request) (ok bool) {
	defer func() {
		if p := recover(); p != nil {
			logPanic(cs.s.logger(), p, cs.c)
			cs.set(flagLingering)
			cs.clear(flagKeep)
			_ = cs.c.Abort()
		}
	}()
	cs.s.fast.ServeFast(w, r)
	return true
}

// keepAfter decides, as the current response's head is written, whether
// the connection survives the response. From then on no "100 Continue" may
// be sent; a client still waiting for one before sending its body is not
// kept (as net/http), nor one whose body's framing broke.
func (cs *conn) keepAfter(clientKeep, handlerClose bool) bool {
	owed := cs.receiving() && cs.rb.expect && !cs.has(flagContinued)
	cs.set(flagContinued)
	return clientKeep && !handlerClose && !cs.s.closing.Load() && !cs.lastInput() && !owed && !cs.has(flagBroken)
}

// lastInput reports whether the current request is the last the client
// sent: it shut down its side with nothing after this request. Requests
// pipelined before the shutdown are still answered, on keep-alive.
func (cs *conn) lastInput() bool { return cs.has(flagReadEOF) && !cs.has(flagMore) }

// refuse answers a request the server will not serve, in net/http's format,
// and closes the connection once the client has had time to read it.
func (cs *conn) refuse(e *parseError) {
	ls := cs.ls
	out := ls.scratch[:0]
	switch e.code {
	case 417:
		out = append(out, "HTTP/1.1 417 Expectation Failed\r\n"...)
		out = ls.appendHeadTail(out)
	case 501:
		out = append(out, statusLines[501][:len(statusLines[501])-2]...)
		out = append(out, errorHeaders...)
		out = append(out, "Unsupported transfer encoding"...)
	default:
		line := statusLines[e.code]
		text := line[len("HTTP/1.1 ") : len(line)-2]
		out = append(out, line[:len(line)-2]...)
		if e.text != "" {
			out = append(out, ": "...)
			out = append(out, e.text...)
		}
		out = append(out, errorHeaders...)
		out = append(out, text...)
		if e.text != "" {
			out = append(out, ": "...)
			out = append(out, e.text...)
		}
	}
	ls.scratch = out[:0]
	_, _ = cs.c.Write(out)
	cs.linger()
}

// appendHeadTail finishes a bodiless closing response: Date,
// Content-Length 0, Connection: close.
func (ls *loopState) appendHeadTail(out []byte) []byte {
	out = append(out, ls.date...)
	return append(out, "Content-Length: 0\r\nConnection: close\r\n\r\n"...)
}

const errorHeaders = "\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n"

// linger half-closes once the response is sent and drops further input; the
// connection closes when the client closes its side or lingerTime passes.
func (cs *conn) linger() {
	cs.set(flagLingering)
	cs.buf = cs.buf[:0]
	cs.deadline = cs.ls.now + int64(lingerTime) + int64(cs.s.cfg.tick())
	_ = cs.c.CloseWrite()
	if cs.has(flagReadEOF) {
		_ = cs.c.Close()
	}
	cs.setPaused(false)
}

func (cs *conn) onReadClosed() {
	cs.set(flagReadEOF)
	if cs.h2 != nil {
		cs.h2.onReadClosed()
		return
	}
	if cs.receiving() {
		cs.rb.receiving = false
		cs.rb.fail(io.ErrUnexpectedEOF)
		cs.set(flagBroken)
	}
	if cs.inflight != nil {
		cs.inflight.ctx.cancel(nil)
	}
	if !cs.has(flagBusy | flagBlocked) {
		_ = cs.c.Close()
	}
}

func (cs *conn) onWritable(w bool) {
	cs.stall(w)
	if cs.h2 != nil {
		cs.h2.onWritable(w)
		return
	}
	if w && cs.deferred != nil {
		cs.deferred.release(nil)
	}
	if !w || !cs.has(flagBlocked) {
		if cs.inflight != nil {
			cs.inflight.writable(w)
		}
		return
	}
	cs.clear(flagBlocked)
	if cs.inflight != nil {
		cs.inflight.writable(true)
	}
	cs.serveBuffered()
	cs.afterServe()
}

func (cs *conn) onClose(cause error) {
	cs.set(flagClosed)
	cs.ls.remove(cs)
	if cs.h2 != nil {
		cs.h2.onClose(cause)
	}
	if bs := cs.rb; bs != nil {
		cs.rb = nil
		bs.receiving = false
		bs.fail(cmp.Or(cause, errConnGone))
	}
	if cs.inflight != nil {
		cs.inflight.gone(cause)
	}
	if cs.deferred != nil {
		cs.deferred.gone.Store(true)
		cs.deferred.release(errConnGone)
		cs.deferred = nil
	}
	cs.buf = nil
}
