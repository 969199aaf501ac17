package httpserver

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"golang.org/x/net/http2"
)

// The adapter over HTTP/2: a stream's request becomes the *http.Request
// net/http's HTTP/2 server builds (Proto "HTTP/2.0", Host from
// :authority, Body streamed under the stream's flow control, Trailer
// declared and then filled), and its handler runs as an HTTP/1.1
// request's does, on a kept goroutine (or inline), with the same writer:
// its chunks come back to the loop through the same tasks, framed here as
// HEADERS, DATA and trailers instead of HTTP/1.1's head and chunks. A
// handler whose data the client's windows hold back waits in Write or
// Flush, as one waits for a slow HTTP/1.1 client, but one chunk behind:
// a Flush returns once its chunk is handed over, and the next hand-over
// waits for it to have left (stdRequest.send).

var (
	// errHijackH2: an HTTP/2 stream has no connection of its own to take
	// (net/http's HTTP/2 writer is no http.Hijacker).
	errHijackH2 = fmt.Errorf("httpserver: Hijack of an HTTP/2 stream: %w", http.ErrNotSupported)
	// errUpgradeH2: HTTP/2 has no 101 (RFC 9113 section 8.6).
	errUpgradeH2 = errors.New("httpserver: Upgrade of an HTTP/2 request")
)

// serveStd runs the http.Handler for the stream.
func (st *h2Stream) serveStd() {
	hc := st.hc
	cs := hc.cs
	r := Request{b: st.b, p: &st.p, conn: cs.c, stream: st.body}
	if string(r.Target()) == "*" && r.Method() == "OPTIONS" {
		// as net/http answers it, without the handler
		hc.writeHead(st.id, http.StatusOK, nil, 0, true, true)
		st.headSent = true
		st.endSent()
		return
	}
	cs.initBase()
	sr := &stdRequest{
		s: cs.s, loop: cs.c.Loop(), minor: 1, keep: true, inline: cs.s.cfg.inline, cs: cs, h2: st,
	}
	sr.ctx.parent = cs.base
	req, perr := cs.newHTTPRequest(&r, &sr.ctx, &sr.url)
	if perr == nil {
		var tr http.Header
		if tr, perr = declaredTrailers(req.Header); tr != nil {
			req.Trailer = tr
		}
	}
	if perr != nil {
		st.refuse(perr.code)
		return
	}
	req.Proto, req.ProtoMajor, req.ProtoMinor, req.Close = "HTTP/2.0", 2, 0, false
	req.RemoteAddr = cs.remote
	req.TLS = cs.tlsState()
	if st.trailer != nil { // a body held whole came with its trailers
		mergeTrailer(req, st.trailer)
	}
	sr.req, sr.isHEAD = req, req.Method == "HEAD"
	sr.w.sr = sr
	if bs := st.body; bs != nil {
		bs.req = req // its trailers fill req.Trailer at its end (endRecv)
	}
	st.sr = sr
	st.counted = true
	hc.running++
	if sr.inline {
		sr.Run()
		return
	}
	cs.ls.pool.Go(sr)
}

// runChunk frames a chunk of the handler's response (chunk.Run over
// HTTP/2): HEADERS for its head, DATA as the windows allow, and at the
// end trailers or END_STREAM. A chunk sent mid-handler is acknowledged
// once its data has left and the connection can take more.
func (st *h2Stream) runChunk(c *chunk) {
	sr := c.sr
	hc := st.hc
	if c.last {
		st.handlerDone()
	}
	if st.sendDone || hc.dead || sr.dead.Load() {
		if !c.last && !sr.inline {
			sr.ack.Done()
		}
		return
	}
	if c.abort { // the handler panicked
		st.reset(http2.ErrCodeInternal, nil)
		return
	}
	if c.head {
		if !sr.isHEAD && bodyAllowed(c.status) {
			st.declaredOut = c.fr.length
		}
		end := c.last && len(c.data) == 0 && len(c.trailers) == 0 && !st.short(0)
		hc.writeHead(st.id, c.status, c.hdr, c.fr.length, c.date, end)
		st.headSent = true
		if end {
			st.endSent()
			return
		}
	}
	if !c.last && !sr.inline {
		sr.waiting = true // until the data has left (release)
	}
	st.queueOut(c.data, c.last, c.trailers, false)
}

// setDeadline is http.ResponseController's SetWriteDeadline (write) or
// SetReadDeadline for a stream's request, on its loop: as over HTTP/1.1,
// but a passed deadline ends the stream only (RST_STREAM CANCEL for the
// response; for the body, its reader's error, the handler answering).
func (st *h2Stream) setDeadline(sr *stdRequest, at int64, write bool) error {
	switch {
	case sr.dead.Load():
		return sr.goneErr()
	case st.sr != sr || !st.counted:
		return errRequestDone
	}
	past := at != 0 && at <= time.Now().UnixNano()
	if write {
		st.writeAt = at
		if past {
			st.writeAt = 0
			st.reset(http2.ErrCodeCancel, errWriteTimeout)
		}
		return nil
	}
	if st.body == nil || st.recvDone || st.discard {
		return nil // the body is here whole: nothing left to time out
	}
	st.ownRead, st.readAt = true, at
	if past {
		st.readAt = 0
		st.readTimedOut()
	}
	return nil
}

// EnableFullDuplex implements http.ResponseController's EnableFullDuplex:
// an HTTP/2 stream is full duplex already (nil, as net/http's); over
// HTTP/1.1 it is not supported.
func (w *stdWriter) EnableFullDuplex() error {
	if w.sr.h2 != nil {
		return nil
	}
	return http.ErrNotSupported
}
