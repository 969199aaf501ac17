package httpserver

import (
	"cmp"
	"net/http"
	"net/textproto"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// h2Stream is one stream of an HTTP/2 connection: a request and its
// response. Its states (RFC 9113 section 5.1) are two flags: recvDone once
// the client ended its side (END_STREAM) and sendDone once the server
// ended its own; the stream is open while neither is set, half-closed
// while one is, and closed (forgotten) once both are or either side reset
// it. Only its loop touches it, but an adapter handler's goroutine, which
// reaches it through its stdRequest's tasks.
type h2Stream struct {
	hc *h2Conn
	id uint32

	recvDone bool // the client's side ended (END_STREAM, or reset)
	sendDone bool // the server's side ended (END_STREAM sent, or reset)
	closed   bool // forgotten by the connection
	counted  bool // its handler counts in hc.running
	headSent bool // the response's HEADERS are out

	// The request: its head laid out as the HTTP/1.1 parser would have
	// left it (h2request.go), and a body held whole (fast API, inline
	// adapter: after the head in b) or streamed (body).
	p        parser
	b        []byte
	declared int64 // content-length; -1: none
	received int64
	expect   bool // "expect: 100-continue"
	whole    bool
	held     int64 // bytes of the body held whole, counted in hc.whole
	body     *Body
	discard  bool        // DATA is dropped from now on: the body's reader closed it or timed out
	trailer  http.Header // the request's trailers, once here

	recvWindow int64 // what the client may still send on the stream
	recvOwed   int64 // bytes released, to give back by WINDOW_UPDATE
	inWin      int64 // streamed: bytes put in the body's window that its reader has not been seen to take

	// The response: data waiting for the send windows.
	sendWindow  int64
	out         []byte // to send: the handler's own bytes (adapter) or own's
	own         []byte // a copy of what a fast handler's reused buffer held
	outLast     bool   // out ends the response
	outTrailers []byte // trailer lines ("Name: value\r\n") after out
	declaredOut int64  // the response's content-length; -1: none
	sentOut     int64
	queued      bool // in hc.sendq

	// Deadlines, unix ns (0: none): the request's arrival (Timeouts.Read,
	// or the handler's SetReadDeadline when ownRead), the response's
	// (Timeouts.Write, SetWriteDeadline), and the bound on a response the
	// client's windows hold back (Timeouts.WriteStall).
	readAt    int64
	ownRead   bool
	writeAt   int64
	stallAt   int64
	stallSent int64 // bytes sent since stallAt was set

	sr       *stdRequest // adapter
	deferred *Deferred   // fast API
}

// h2Action is what a header block does once decoded.
type h2Action uint8

const (
	h2Open     h2Action = iota // opens a stream
	h2Trailers                 // ends an open stream's request
	h2Drop                     // nothing: it was decoded to keep the HPACK table in step (a stream over GOAWAY's last one)
	h2Refuse                   // REFUSED_STREAM: over Limits.Streams
	h2Reject                   // RST_STREAM(code)
)

// h2Block is the header block being read (HEADERS and its CONTINUATION
// frames) and what its fields said.
type h2Block struct {
	active    bool
	id        uint32
	action    h2Action
	code      http2.ErrCode // h2Reject's
	endStream bool
	start     int64 // unix ns
	size      int   // bytes of fragments
	list      int   // the decoded header list's size, as SETTINGS_MAX_HEADER_LIST_SIZE counts it
	count     int   // regular fields
	tooBig    bool  // over Limits.HeaderBytes or Limits.Headers: 431
	malformed bool  // RFC 9113 section 8.1.1: PROTOCOL_ERROR
	regular   bool  // a regular field came (no pseudo-field may follow)
	seen      uint8 // pseudo-fields seen, one bit each
	method    string
	scheme    string
	path      string
	authority string
}

// h2BlockSlack is what a header block's encoded size may exceed
// Limits.HeaderBytes by: the list's size counts 32 bytes a field, which
// its encoding never takes, so a block within the limit is within this.
const h2BlockSlack = 4 << 10

// headers starts reading a header block: a new stream's request, or an
// open one's trailers.
func (hc *h2Conn) headers(f *http2.HeadersFrame) error {
	id := f.StreamID
	b := &hc.blk
	*b = h2Block{active: true, id: id, endStream: f.StreamEnded(), start: time.Now().UnixNano()}
	st := hc.streams[id]
	switch {
	case st != nil:
		switch {
		case st.recvDone:
			b.action, b.code = h2Reject, http2.ErrCodeStreamClosed
		case !f.StreamEnded():
			b.action, b.code = h2Reject, http2.ErrCodeProtocol // trailers end the stream
		default:
			b.action = h2Trailers
		}
	case id%2 == 0:
		return connError(http2.ErrCodeProtocol, "a client stream with an even id")
	case id <= hc.lastID:
		// A stream id must grow (RFC 9113 section 5.1.1); trailers in
		// flight for a stream the server reset meet this too, as on
		// net/http.
		return connError(http2.ErrCodeProtocol, "HEADERS on a closed stream")
	default:
		hc.lastID = id
		switch {
		case hc.goingAway:
			b.action = h2Drop
		case hc.open >= hc.maxStreams || hc.running >= hc.maxStreams:
			if err := hc.flood.count(hc, h2Reset); err != nil {
				return err
			}
			b.action = h2Refuse
		case f.HasPriority() && f.Priority.StreamDep == id:
			b.action, b.code = h2Reject, http2.ErrCodeProtocol
		}
	}
	// Blocks that serve no request are decoded only to keep the table in
	// step: their fields are not made.
	hc.dec.SetEmitEnabled(b.action == h2Open || b.action == h2Trailers)
	return hc.fragment(f.HeaderBlockFragment(), f.HeadersEnded())
}

func (hc *h2Conn) continuation(f *http2.ContinuationFrame) error {
	return hc.fragment(f.HeaderBlockFragment(), f.HeadersEnded())
}

// fragment decodes one piece of the header block. The block's encoded
// size is bounded (a CONTINUATION flood ends there) and so is its decoded
// size (an HPACK bomb stops being decoded into fields once over the
// limit; the rest is still read to keep the table in step).
func (hc *h2Conn) fragment(frag []byte, end bool) error {
	b := &hc.blk
	b.size += len(frag)
	if b.size > hc.cs.s.cfg.maxHeaderBytes+h2BlockSlack {
		return connError(http2.ErrCodeEnhanceYourCalm, "header block over the header limit")
	}
	if len(frag) == 0 && !end {
		if err := hc.flood.count(hc, h2Empty); err != nil {
			return err
		}
	}
	if _, err := hc.dec.Write(frag); err != nil {
		return connError(http2.ErrCodeCompression, err.Error())
	}
	if !end {
		return nil
	}
	return hc.endBlock()
}

// endBlock acts on a whole header block.
func (hc *h2Conn) endBlock() error {
	b := hc.blk
	hc.blk.active = false
	err := hc.dec.Close()
	hc.dec.SetEmitEnabled(true)
	fields := hc.fields
	if err == nil {
		switch b.action {
		case h2Open:
			hc.openStream(&b, fields)
		case h2Trailers:
			hc.streams[b.id].trailersIn(&b, fields)
		case h2Refuse:
			err = hc.fr().WriteRSTStream(b.id, http2.ErrCodeRefusedStream)
		case h2Reject:
			if st := hc.streams[b.id]; st != nil {
				st.reset(b.code, errMalformedH2)
			} else {
				err = hc.fr().WriteRSTStream(b.id, b.code)
			}
		}
	} else {
		err = connError(http2.ErrCodeCompression, err.Error())
	}
	clear(fields) // their strings are the stream's copies now
	hc.fields = fields[:0]
	return err
}

// openStream opens the stream a header block asked for and starts
// serving it.
func (hc *h2Conn) openStream(b *h2Block, fields []hpack.HeaderField) {
	st := &h2Stream{
		hc: hc, id: b.id, recvDone: b.endStream, declared: -1, declaredOut: -1,
		recvWindow: h2StreamWindow, sendWindow: hc.peerInitial,
	}
	if hc.streams == nil {
		hc.streams = make(map[uint32]*h2Stream)
	}
	hc.streams[b.id] = st
	hc.streamOpened()
	switch {
	case b.malformed:
		st.reset(http2.ErrCodeProtocol, errMalformedH2)
	case b.tooBig:
		st.refuse(http.StatusRequestHeaderFieldsTooLarge)
	default:
		switch code := st.build(b, fields); code {
		case 0:
			st.begin()
		case http.StatusBadRequest:
			st.reset(http2.ErrCodeProtocol, errMalformedH2)
		default:
			st.refuse(code)
		}
	}
}

// begin serves a stream whose request head is here: its handler runs now
// when the request has no body or the body streams, else once the body
// is here whole.
func (st *h2Stream) begin() {
	cs := st.hc.cs
	s, cfg := cs.s, cs.s.cfg
	now := time.Now().UnixNano()
	if cfg.write > 0 {
		st.writeAt = now + int64(cfg.write)
	}
	if st.recvDone {
		st.dispatch()
		return
	}
	stream := false
	if s.fast == nil {
		stream = !cfg.inline
	} else if bsr, ok := s.fast.(BodyStreamer); ok {
		stream = bsr.StreamBody(&Request{b: st.b, p: &st.p, conn: cs.c})
	}
	if stream {
		if st.declared > cfg.maxStreamBody {
			st.refuse(http.StatusRequestEntityTooLarge)
			return
		}
		st.body = st.newBody()
		st.touchRead(now)
		st.dispatch()
		return
	}
	if st.declared > int64(cfg.maxBody) {
		st.refuse(http.StatusRequestEntityTooLarge)
		return
	}
	st.whole = true
	if cfg.read > 0 {
		st.readAt = now + int64(cfg.read)
	}
}

// dispatch runs the stream's handler. A body held whole is given back to
// the connection's bound once the handler has it (the fast API's view of
// it is valid during the call only; the adapter copies it).
func (st *h2Stream) dispatch() {
	if st.whole && st.p.body.hi == 0 {
		st.p.body = span{int32(st.p.headEnd), int32(len(st.b))}
	}
	if st.hc.cs.s.fast != nil {
		st.serveFast()
	} else {
		st.serveStd()
	}
	st.dropHead()
}

// dropHead lets go of the request's bytes once its handler has them.
func (st *h2Stream) dropHead() {
	st.whole = false
	if st.held > 0 {
		st.hc.whole -= st.held
		st.held = 0
		st.hc.release(0) // the connection's window may have been held for it
	}
	st.b, st.p.fields, st.p.trailers = nil, nil, nil
}

// data takes a DATA frame: flow control at both levels (padding is
// released at once), the content-length, then the body.
func (hc *h2Conn) data(f *http2.DataFrame) error {
	id := f.StreamID
	n := int64(f.Length)
	if n > hc.recvWindow {
		return connError(http2.ErrCodeFlowControl, "DATA over the connection window")
	}
	hc.recvWindow -= n
	st := hc.streams[id]
	if st == nil || st.recvDone {
		hc.release(n)
		switch {
		case st == nil && id > hc.lastID:
			return connError(http2.ErrCodeProtocol, "DATA on an idle stream")
		case st == nil:
			// A closed stream's: RST_STREAM(STREAM_CLOSED) (RFC 9113
			// section 6.1, as net/http), counted as cheap frames so that
			// the answers stay bounded.
			if err := hc.flood.count(hc, h2Cheap); err != nil {
				return err
			}
		}
		return streamError(id, http2.ErrCodeStreamClosed, "DATA on a closed or half-closed (remote) stream")
	}
	if n > st.recvWindow {
		hc.release(n)
		return streamError(id, http2.ErrCodeFlowControl, "DATA over the stream window")
	}
	st.recvWindow -= n
	data := f.Data()
	if pad := n - int64(len(data)); pad > 0 {
		st.release(pad)
		hc.release(pad)
	}
	if len(data) == 0 && !f.StreamEnded() {
		if err := hc.flood.count(hc, h2Empty); err != nil {
			return err
		}
	}
	st.received += int64(len(data))
	if st.declared >= 0 && st.received > st.declared {
		hc.release(int64(len(data)))
		return streamError(id, http2.ErrCodeProtocol, "body longer than its content-length")
	}
	st.take(data)
	if f.StreamEnded() && !st.recvDone {
		return st.endRecv()
	}
	return nil
}

// take puts body bytes where the stream's request wants them.
func (st *h2Stream) take(data []byte) {
	hc := st.hc
	n := int64(len(data))
	switch {
	case st.body != nil && !st.discard:
		st.put(data)
		st.touchRead(0)
	case st.whole:
		if int64(len(st.b)-st.p.headEnd)+n > int64(hc.cs.s.cfg.maxBody) {
			hc.release(n)
			st.refuse(http.StatusRequestEntityTooLarge)
			return
		}
		st.b = append(st.b, data...)
		st.held += n
		hc.whole += n
		st.release(n)
		hc.release(n)
	default:
		st.release(n)
		hc.release(n)
	}
}

// endRecv ends the request (END_STREAM): its body is whole, and the
// handler of a body held whole runs.
func (st *h2Stream) endRecv() error {
	if st.declared >= 0 && st.received != st.declared {
		return streamError(st.id, http2.ErrCodeProtocol, "body shorter than its content-length")
	}
	st.recvDone, st.readAt = true, 0
	if bs := st.body; bs != nil {
		bs.mu.Lock()
		if bs.err == nil && !bs.eof {
			bs.eof = true
			bs.trailer = st.trailer
			if bs.req != nil && st.trailer != nil {
				mergeTrailer(bs.req, st.trailer)
			}
		}
		bs.cond.Broadcast()
		bs.mu.Unlock()
	}
	if st.whole {
		st.dispatch()
	}
	st.maybeClose()
	return nil
}

// trailersIn takes the request's trailers, which end it.
func (st *h2Stream) trailersIn(b *h2Block, fields []hpack.HeaderField) {
	if b.malformed || b.tooBig {
		st.reset(http2.ErrCodeProtocol, errMalformedH2)
		return
	}
	if len(fields) > 0 {
		h := make(http.Header, len(fields))
		for _, f := range fields {
			k := textproto.CanonicalMIMEHeaderKey(f.Name)
			h[k] = append(h[k], f.Value)
		}
		st.trailer = h
		if st.whole {
			st.addTrailers(fields)
		}
	}
	if err := st.endRecv(); err != nil {
		st.hc.onError(err)
	}
}

// refuse answers a request the server will not serve with status code,
// and ends the stream.
func (st *h2Stream) refuse(code int) {
	hc := st.hc
	if st.sendDone || hc.dead {
		return
	}
	hc.writeHead(st.id, code, nil, 0, true, true)
	st.headSent = true
	st.endSent()
}

// endSent follows the response's END_STREAM: a request still arriving is
// refused the rest (RST_STREAM NO_ERROR, RFC 9113 section 8.1) and its
// body's reader stopped.
func (st *h2Stream) endSent() {
	st.sendDone, st.writeAt, st.stallAt = true, 0, 0
	if bs := st.body; bs != nil {
		bs.mu.Lock()
		bs.closeLocked()
		bs.mu.Unlock()
	}
	if !st.recvDone {
		_ = st.hc.fr().WriteRSTStream(st.id, http2.ErrCodeNo)
		st.recvDone = true
	}
	st.maybeClose()
}

// reset ends the stream with RST_STREAM(code); its handler learns cause.
func (st *h2Stream) reset(code http2.ErrCode, cause error) {
	if st.closed {
		return
	}
	_ = st.hc.fr().WriteRSTStream(st.id, code)
	st.abandon(cause)
}

// abandon ends the stream at once (reset by either side, or the
// connection gone): its body's reader and its handler learn cause, and
// what it holds is let go.
func (st *h2Stream) abandon(cause error) {
	if st.closed {
		return
	}
	st.recvDone, st.sendDone = true, true
	st.out, st.own, st.outTrailers = nil, nil, nil
	// The handler's context is cancelled before its body's reader learns
	// the end, as net/http does: a handler (grpc-go's) that sees the read
	// fail finds its context done and tells a cancelled RPC from a broken
	// body.
	if sr := st.sr; sr != nil {
		sr.gone(cause)
	}
	if bs := st.body; bs != nil {
		bs.fail(cmp.Or(cause, errConnGone))
	}
	if d := st.deferred; d != nil {
		st.deferred = nil
		d.gone.Store(true)
		d.release(cmp.Or(cause, errConnGone))
		st.handlerDone()
	}
	st.close()
}

// maybeClose closes a stream both sides of which ended.
func (st *h2Stream) maybeClose() {
	if st.recvDone && st.sendDone {
		st.close()
	}
}

// close forgets the stream: the connection's window gets back what its
// body still held.
func (st *h2Stream) close() {
	if st.closed {
		return
	}
	st.closed = true
	hc := st.hc
	st.dropHead()
	hc.release(st.inWin)
	st.inWin = 0
	st.dequeue()
	delete(hc.streams, st.id)
	hc.streamClosed()
}

// handlerDone counts the end of the stream's handler.
func (st *h2Stream) handlerDone() {
	if st.counted {
		st.counted = false
		st.hc.running--
	}
}

// tick checks the stream's deadlines.
func (st *h2Stream) tick(now int64) {
	switch {
	case st.writeAt != 0 && st.writeAt <= now:
		st.writeAt = 0
		st.reset(http2.ErrCodeCancel, errWriteTimeout)
	case st.readAt != 0 && st.readAt <= now:
		st.readAt = 0
		st.readTimedOut()
	case st.stallAt != 0 && st.stallAt <= now:
		st.hc.stalled(errWriteStall, false)
	}
}

// readTimedOut ends a request that did not arrive in time: one held whole
// has no handler yet and is reset; a streamed body's reader gets the bytes
// that came, then an error wrapping os.ErrDeadlineExceeded, and its
// handler still answers (the rest of the body is dropped).
func (st *h2Stream) readTimedOut() {
	bs := st.body
	if bs == nil {
		st.reset(http2.ErrCodeCancel, bodyTimeout)
		return
	}
	err := error(bodyTimeout)
	if st.ownRead {
		err = errReadDeadline
	}
	bs.fail(err)
	st.discard = true
}

// touchRead restarts a streamed body's read timeout (from now, or from
// the clock when now is 0): the client has the time between its bytes,
// and none while the handler is the one behind (its window is full).
func (st *h2Stream) touchRead(now int64) {
	d := st.hc.cs.s.cfg.read
	if st.ownRead || d <= 0 || st.recvDone {
		return
	}
	if st.recvWindow <= 0 {
		st.readAt = 0
		return
	}
	if now == 0 {
		now = time.Now().UnixNano()
	}
	st.readAt = now + int64(d)
}
