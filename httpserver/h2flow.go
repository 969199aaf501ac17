package httpserver

import (
	"time"

	"golang.org/x/net/http2"
)

// HTTP/2 flow control, both ways (RFC 9113 section 5.2).
//
// Receiving: the client may send what the connection's window
// (h2ConnWindow) and the stream's (h2StreamWindow) allow. A byte is
// released once the server is done with it: at once when it is dropped
// or held whole (the connection's whole bodies bounded apart, wholeCap),
// when the handler reads it for a streamed body. Released bytes go back
// to the client by WINDOW_UPDATE once a quarter of a window has gathered,
// so a fast upload keeps three quarters of the window in flight and the
// client never waits for a window the handler has made room in.
//
// Sending: DATA leaves as the client's windows and the connection's
// output allow, a frame at a time, the streams waiting taking turns
// (sendq). While the output is over its high watermark nothing more is
// framed: an adapter handler waits in Write or Flush, as over HTTP/1.1,
// for its data to leave (one chunk behind, stdRequest.send). A response the client's windows hold back for
// Timeouts.WriteStall (less than stallProgress sent meanwhile) ends the
// connection: the zero-window reader.

// stallProgress is what a client must take of a held-back response within
// Timeouts.WriteStall to keep its connection: the watermarks' default
// difference, HTTP/1.1's measure.
const stallProgress = 32 << 10

// wholeCap bounds the request bodies a connection holds whole at once:
// twice the whole-body limit. Past it the connection's window is given
// back no more until handlers have taken bodies; a client uploading
// several bodies that together pass it waits, and one that cannot finish
// them times out (Timeouts.Read).
func (hc *h2Conn) wholeCap() int64 { return 2 * int64(hc.cs.s.cfg.maxBody) }

// release gives n bytes of the connection's window back.
func (hc *h2Conn) release(n int64) {
	hc.recvOwed += n
	if hc.recvOwed >= h2ConnWindow/4 && hc.whole <= hc.wholeCap() && !hc.dead {
		_ = hc.fr().WriteWindowUpdate(0, uint32(hc.recvOwed))
		hc.recvWindow += hc.recvOwed
		hc.recvOwed = 0
	}
}

// release gives n bytes of the stream's window back, while the client may
// still send on it.
func (st *h2Stream) release(n int64) {
	if st.recvDone || n <= 0 {
		return
	}
	st.recvOwed += n
	if st.recvOwed >= h2StreamWindow/4 {
		_ = st.hc.fr().WriteWindowUpdate(st.id, uint32(st.recvOwed))
		st.recvWindow += st.recvOwed
		st.recvOwed = 0
	}
}

// queueOut adds data to the stream's response and sends what the windows
// allow. The data is copied when copy is set (the caller reuses its
// buffer) or when earlier data still waits; else the stream holds the
// caller's slice until it is sent (an adapter handler waits for that).
// last ends the response, with trailer lines if any.
func (st *h2Stream) queueOut(data []byte, last bool, trailers []byte, copy bool) {
	switch {
	case len(st.out) == 0 && !copy:
		st.out = data
	case len(data) > 0 || len(st.out) > 0:
		st.own = append(append(st.own[:0], st.out...), data...)
		st.out = st.own
	}
	st.outLast, st.outTrailers = last, trailers
	st.send(-1)
}

// send writes up to limit DATA frames (-1: as many as it can) of the
// stream's response.
func (st *h2Stream) send(limit int) {
	hc := st.hc
	for frames := 0; len(st.out) > 0 && frames != limit; frames++ {
		n := int64(min(len(st.out), h2MaxFrame))
		n = min(n, st.sendWindow, hc.sendWindow)
		if n <= 0 || hc.dead || !hc.cs.c.Writable() {
			break
		}
		end := int(n) == len(st.out) && st.outLast && len(st.outTrailers) == 0 && !st.short(int(n))
		_ = hc.fr().WriteData(st.id, end, st.out[:n])
		st.out = st.out[n:]
		st.sendWindow -= n
		hc.sendWindow -= n
		st.sentOut += n
		hc.flood.sent(hc.cs.ls.now, int(n))
		if st.stallAt != 0 {
			if st.stallSent += n; st.stallSent >= stallProgress {
				st.stallAt = 0
			}
		}
		if end {
			st.out = nil
			st.endSent()
			return
		}
	}
	if len(st.out) > 0 {
		st.blocked()
		return
	}
	st.drained()
}

// short reports whether the response ends short of the content-length it
// declared, once pending more bytes are sent.
func (st *h2Stream) short(pending int) bool {
	return st.declaredOut >= 0 && st.sentOut+int64(pending) < st.declaredOut
}

// blocked notes a stream whose data waits: for the connection's window or
// output it waits in turn (sendq); for a window it waits at most
// Timeouts.WriteStall.
func (st *h2Stream) blocked() {
	hc := st.hc
	byWindow := st.sendWindow <= 0 || hc.sendWindow <= 0
	if byWindow && hc.readEOF {
		st.reset(http2.ErrCodeCancel, errConnGone) // no WINDOW_UPDATE can come any more
		return
	}
	if st.sendWindow > 0 {
		hc.enqueue(st)
	}
	if d := hc.cs.s.cfg.stall; d > 0 && st.stallAt == 0 && byWindow {
		st.stallAt, st.stallSent = time.Now().UnixNano()+int64(d), 0
	}
}

// drained follows a stream whose data has all left: the response ends
// (trailers, or an empty DATA frame with END_STREAM when no frame ended
// it; RST_STREAM when it fell short of its declared length), or the
// handler waiting for it goes on.
func (st *h2Stream) drained() {
	st.stallAt = 0
	if !st.outLast || st.sendDone {
		st.resume()
		return
	}
	hc := st.hc
	switch {
	case st.short(0):
		st.reset(http2.ErrCodeInternal, nil)
	case len(st.outTrailers) > 0:
		hc.writeTrailers(st.id, st.outTrailers)
		st.outTrailers = nil
		st.endSent()
	default:
		_ = hc.fr().WriteData(st.id, true, nil)
		st.endSent()
	}
}

// resume lets the handler waiting for the stream's data to leave go on,
// once it has and the connection can take more.
func (st *h2Stream) resume() {
	if len(st.out) > 0 || !st.hc.cs.c.Writable() {
		return
	}
	if sr := st.sr; sr != nil {
		sr.writable(true)
	}
	if d := st.deferred; d != nil {
		d.release(nil)
	}
}

// enqueue puts a stream with data waiting in the send queue.
func (hc *h2Conn) enqueue(st *h2Stream) {
	if st.queued || len(st.out) == 0 || st.sendDone {
		return
	}
	st.queued = true
	hc.sendq = append(hc.sendq, st)
}

// dequeue takes a stream out of the send queue.
func (st *h2Stream) dequeue() {
	if !st.queued {
		return
	}
	st.queued = false
	q := st.hc.sendq
	for i, s := range q {
		if s == st {
			st.hc.sendq = append(q[:i], q[i+1:]...)
			q[len(q)-1] = nil
			return
		}
	}
}

// pump sends the queued streams' data a frame each in turn while the
// windows and the output allow.
func (hc *h2Conn) pump() {
	for len(hc.sendq) > 0 && hc.sendWindow > 0 && !hc.dead && hc.cs.c.Writable() {
		q := hc.sendq
		st := q[0]
		copy(q, q[1:])
		q[len(q)-1] = nil
		hc.sendq = q[:len(q)-1]
		st.queued = false
		st.send(1) // requeues itself when more waits and its window allows
	}
}
