package httpserver

import "golang.org/x/net/http2"

// The fast API over HTTP/2: the handler runs on the loop with the loop's
// Request and Response, as for HTTP/1.1; the stream's request is laid out
// as a parsed one (h2request.go), a body held whole after its head. What
// the handler writes is framed here: HEADERS (its lines, a content-length
// from the body or SetContentLength), then DATA as the windows allow
// (copied while they hold it back: the Response is reused) and
// END_STREAM. Flush sends the head and what is written so far; Defer
// hands the response to another goroutine while the connection's other
// streams go on. "Connection: close" (AddHeader) means nothing to a
// stream, and Upgrade is refused.

// serveFast runs the fast handler for the stream.
func (st *h2Stream) serveFast() {
	hc := st.hc
	cs := hc.cs
	ls := cs.ls
	r := &ls.req
	r.b, r.p, r.conn, r.stream = st.b, &st.p, cs.c, st.body
	w := &ls.resp
	w.reset(cs, r)
	w.st = st
	st.counted = true
	hc.running++
	if st.runFast(w, r) && w.deferred == nil {
		w.finish()
		st.handlerDone()
	}
	w.cs, w.deferred, w.st = nil, nil, nil
	r.b, r.p, r.conn, r.stream = nil, nil, nil, nil
}

// runFast calls the handler; a panic is logged and resets the stream (the
// connection's other streams go on) and runFast returns false.
func (st *h2Stream) runFast(w *Response, r *Request) (ok bool) {
	defer func() {
		if p := recover(); p != nil {
			cs := st.hc.cs
			logPanic(cs.s.logger(), p, cs.c)
			if st.deferred != nil && st.deferred == w.deferred {
				st.deferred = nil
			}
			st.handlerDone()
			st.reset(http2.ErrCodeInternal, nil)
		}
	}()
	st.hc.cs.s.fast.ServeFast(w, r)
	return true
}

// fastFinish sends what the handler left (Response.finish over HTTP/2).
func (st *h2Stream) fastFinish(w *Response) {
	hc := st.hc
	if st.sendDone || hc.dead {
		return
	}
	noBody := w.noBody || !bodyAllowed(w.status)
	body := w.body
	if noBody {
		body = nil
	}
	if !w.started {
		cl := int64(-1)
		if bodyAllowed(w.status) { // a HEAD response says the length it would have
			cl = int64(len(w.body))
			if w.cl >= 0 {
				cl = w.cl
			}
		}
		if !noBody {
			st.declaredOut = cl
		}
		body = st.within(body)
		end := len(body) == 0 && !st.short(0)
		hc.writeHead(st.id, w.status, w.hdr, cl, true, end)
		st.headSent = true
		if end {
			st.endSent()
			return
		}
	}
	st.queueOut(st.within(body), true, nil, true)
}

// fastFlush sends the head (the first time) and the body written so far
// (Response.Flush over HTTP/2); it does not wait for the client.
func (st *h2Stream) fastFlush(w *Response) error {
	hc := st.hc
	if st.sendDone || hc.dead {
		return errConnGone
	}
	if !w.started {
		w.started = true
		w.noBody = w.noBody || !bodyAllowed(w.status)
		cl := w.cl
		if !bodyAllowed(w.status) {
			cl = -1
		}
		if !w.noBody {
			st.declaredOut = cl
		}
		hc.writeHead(st.id, w.status, w.hdr, cl, true, false)
		st.headSent = true
	}
	if !w.noBody && len(w.body) > 0 {
		st.queueOut(st.within(w.body), false, nil, true)
	}
	w.body = w.body[:0]
	return nil
}

// within cuts body to what the declared content-length leaves room for.
func (st *h2Stream) within(body []byte) []byte {
	if st.declaredOut < 0 {
		return body
	}
	room := st.declaredOut - st.sentOut - int64(len(st.out))
	return body[:max(min(int64(len(body)), room), 0)]
}

// deferredFlush is Deferred.Flush's loop side: it returns once the data
// has left and the connection can take more.
func (st *h2Stream) deferredFlush(d *Deferred) {
	if st.deferred != d || st.sendDone || st.hc.dead || d.gone.Load() {
		d.ack <- d.goneErr()
		return
	}
	if err := st.fastFlush(&d.w); err != nil {
		d.ack <- err
		return
	}
	if len(st.out) == 0 && st.hc.cs.c.Writable() {
		d.ack <- nil
		return
	}
	d.waiting = true // release
}

// deferredFinish is Deferred.Finish's loop side.
func (st *h2Stream) deferredFinish(d *Deferred) {
	if st.deferred != d {
		return
	}
	st.deferred = nil
	st.fastFinish(&d.w)
	st.handlerDone()
}
