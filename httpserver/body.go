package httpserver

import (
	"errors"
	"io"
	"net/http"
	"net/textproto"
	"os"
	"sync"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/internal/loopctl"
)

// bodyWindow is the most body bytes a streamed request holds ahead of its
// reader. The loop stops reading the connection while the window is full
// and reads on once the reader has taken half of it, so an upload of any
// size costs one window (and one read of raw input) of memory, and a
// handler that never reads cannot make the server buffer more.
const bodyWindow = 64 << 10

// maxDiscard is how much of a body its handler left unread the server
// still reads (and drops) after the response, to keep the connection for
// the next request; past it the connection closes. net/http uses the same
// figure.
const maxDiscard = 256 << 10

var (
	// ErrBodyReadOnLoop is returned by a streamed body's Read on its own
	// loop: the bytes it waits for would never arrive (the loop is the one
	// reading them). Read it from another goroutine (see Response.Defer).
	ErrBodyReadOnLoop = errors.New("httpserver: streamed body read on its loop")
	errBodyClosed     = errors.New("http: invalid Read on closed Body")
	errBodyHijack     = errors.New("httpserver: Hijack while the request body is still arriving")
	errChunked        = errors.New("httpserver: malformed chunked encoding")
	errTrailers       = errors.New("httpserver: trailers too large")
)

// Body is a request body read while it arrives: the adapter's Request.Body,
// and the fast API's Request.BodyStream. Read and Close may be called from
// any one goroutine other than the loop's.
type Body struct {
	loop *engine.Loop

	mu      sync.Mutex
	cond    sync.Cond // the reader waits here for bytes, the end or an error
	win     []byte    // received bytes not yet read: win[r:]
	r       int
	eof     bool        // every byte is in win
	err     error       // the body ends in err once win is read
	closed  bool        // Close was called, or the response ended
	stalled bool        // the loop stopped reading: win is full (over HTTP/2: the loop waits to hear what the reader took, see low)
	owed    bool        // a "100 Continue" is owed on the first Read
	queued  bool        // a wake task is on its way to the loop
	trailer http.Header // chunked: the trailers, once the body ended
	req     *http.Request

	// loop side
	cs        *conn
	dec       parser // chunked: the decoder's state; raw input from dec.rpos
	raw       []byte // received input not yet in win (chunked: with framing)
	want      int64  // Content-Length: body bytes still to receive
	receiving bool   // the connection's input is the body's
	decoded   bool   // chunked: the last chunk and the trailers are read
	discard   bool   // the response is sent: input is dropped up to maxDiscard
	dropped   int64
	expect    bool // the client sent "Expect: 100-continue"
	limit     int64
	st        *h2Stream // over HTTP/2: the stream whose DATA frames fill win (h2body.go)
	low       int       // Read wakes a stalled loop once at most low bytes are left unread
}

// newBody starts the body of the request whose head p just parsed.
func newBody(cs *conn, p *parser) *Body {
	bs := &Body{loop: cs.c.Loop(), cs: cs, receiving: true, expect: p.wantsContinue(), limit: p.maxBody, low: bodyWindow / 2}
	bs.cond.L = &bs.mu
	bs.owed = bs.expect
	if p.kind == bodyChunked {
		bs.want = -1
		bs.dec = parser{kind: bodyChunked, lim: p.lim, maxBody: p.maxBody}
	} else {
		bs.want = p.cl
	}
	return bs
}

// Read reads body bytes as they arrive; the first Read of a request that
// asked for "100 Continue" sends it. After the last byte it returns io.EOF,
// and the chunked trailers are set.
func (bs *Body) Read(p []byte) (int, error) {
	if bs.loop.InEventLoop() {
		return 0, ErrBodyReadOnLoop
	}
	bs.mu.Lock()
	for {
		if bs.closed {
			bs.mu.Unlock()
			return 0, errBodyClosed
		}
		if bs.r < len(bs.win) {
			n := copy(p, bs.win[bs.r:])
			bs.r += n
			wake := bs.wakeLocked()
			bs.mu.Unlock()
			if wake {
				bs.wake()
			}
			return n, nil
		}
		if bs.eof {
			bs.mu.Unlock()
			return 0, io.EOF
		}
		if bs.err != nil {
			err := bs.err
			bs.mu.Unlock()
			return 0, err
		}
		if bs.wakeLocked() {
			bs.mu.Unlock()
			bs.wake()
			bs.mu.Lock()
			continue
		}
		if len(p) == 0 {
			bs.mu.Unlock()
			return 0, nil
		}
		bs.cond.Wait()
	}
}

// Close ends reading: later Reads fail, and what still arrives is dropped
// (see maxDiscard).
func (bs *Body) Close() error {
	bs.mu.Lock()
	bs.closeLocked()
	bs.mu.Unlock()
	return nil
}

func (bs *Body) closeLocked() {
	if !bs.closed {
		bs.closed, bs.owed = true, false
		bs.win, bs.r = nil, 0
		bs.cond.Broadcast()
	}
}

// Trailer returns the trailers of a chunked body once Read returned
// io.EOF, else nil.
func (bs *Body) Trailer() http.Header {
	bs.mu.Lock()
	defer bs.mu.Unlock()
	if !bs.eof {
		return nil
	}
	return bs.trailer
}

// wakeLocked reports whether the loop must hear from the reader: it owes a
// "100 Continue", or it stopped reading and the window has room again. It
// claims the one wake task that may be queued.
func (bs *Body) wakeLocked() bool {
	if bs.queued || !bs.owed && !(bs.stalled && len(bs.win)-bs.r <= bs.low) {
		return false
	}
	bs.queued = true
	return true
}

// wake sends the wake task on the loop's control ring (a full task ring
// must not stall an upload). It fails only once the loop has shut down,
// which closed the connection and ended the body.
func (bs *Body) wake() {
	if loopctl.Run(bs.loop, (*bodyWake)(bs)) != nil {
		bs.fail(engine.ErrShutdown)
	}
}

// bodyWake is the loop's side of a wake: the owed "100 Continue", then more
// of the body.
type bodyWake Body

func (w *bodyWake) Run() {
	bs := (*Body)(w)
	bs.mu.Lock()
	bs.queued = false
	owed := bs.owed
	bs.owed = false
	bs.mu.Unlock()
	if bs.st != nil {
		bs.st.bodyWake(owed)
		return
	}
	cs := bs.cs
	if cs.has(flagClosed|flagLingering) || cs.rb != bs {
		return
	}
	if owed && !cs.has(flagContinued) {
		cs.set(flagContinued)
		_, _ = cs.c.Write(continueLine)
	}
	bs.pump()
	cs.afterServe()
}

// fail ends the body in err (once; a body that ended keeps its end).
func (bs *Body) fail(err error) {
	bs.mu.Lock()
	if !bs.eof && bs.err == nil {
		bs.err = err
		bs.cond.Broadcast()
	}
	bs.mu.Unlock()
}

// feed takes the connection's input b for the body and returns how much of
// it was the body's; the rest starts the next request.
func (bs *Body) feed(b []byte) int {
	if bs.dec.kind != bodyChunked {
		n := int(min(int64(len(b)), bs.want))
		bs.want -= int64(n)
		if bs.discard {
			bs.drop(n)
		} else {
			bs.raw = append(bs.raw, b[:n]...)
		}
		if bs.want == 0 {
			bs.receiving = false
		}
		bs.pump()
		return n
	}
	if bs.decoded {
		return 0
	}
	bs.raw = append(bs.raw, b...)
	done, perr := bs.dec.chunks(bs.raw)
	if perr != nil {
		// The framing is broken: nothing more on this connection can be
		// trusted. The reader learns why; the response ends it.
		bs.receiving = false
		bs.raw = nil
		err := errChunked
		switch perr {
		case errBodyTooBig:
			err = &http.MaxBytesError{Limit: bs.limit}
		case errHeaderTooBig:
			err = errTrailers
		}
		bs.fail(err)
		bs.cs.set(flagBroken)
		return len(b)
	}
	n := len(b)
	if done {
		bs.decoded, bs.receiving = true, false
		n -= len(bs.raw) - bs.dec.rpos // the rest is the next request's
		bs.trailer = bs.trailers()
		bs.raw = bs.raw[:bs.dec.rpos]
	}
	if bs.discard {
		bs.drop(int(bs.dec.body.hi - bs.dec.body.lo))
		bs.dec.body.lo = bs.dec.body.hi
	}
	bs.pump()
	return n
}

// pump moves received bytes into the window while it has room (or drops
// them once the reader closed the body), stalls the reading when the window
// is full, and ends the body once every byte is in.
func (bs *Body) pump() {
	data := bs.raw
	if bs.dec.kind == bodyChunked {
		data = bs.raw[bs.dec.body.lo:bs.dec.body.hi]
	}
	bs.mu.Lock()
	closed := bs.closed
	taken := len(data)
	if !closed {
		if bs.r == len(bs.win) {
			bs.win, bs.r = bs.win[:0], 0
		}
		if bs.win == nil && len(data) > 0 {
			size := int64(bodyWindow)
			if bs.want >= 0 {
				size = min(size, bs.want+int64(len(data))) // no more room than the body needs
			}
			bs.win = make([]byte, 0, size)
		}
		if bs.r > 0 && cap(bs.win)-len(bs.win) < len(data) {
			bs.win = bs.win[:copy(bs.win, bs.win[bs.r:])]
			bs.r = 0
		}
		taken = min(len(data), cap(bs.win)-len(bs.win))
		bs.win = append(bs.win, data[:taken]...)
	}
	// A reader that closed early leaves the server dropping the rest:
	// past maxDiscard it stops reading until the response decides.
	bs.stalled = taken < len(data) || closed && !bs.discard && bs.dropped+int64(taken) > maxDiscard
	if taken == len(data) && !bs.receiving && !bs.eof && bs.err == nil {
		bs.eof = true
		if bs.req != nil && bs.trailer != nil {
			mergeTrailer(bs.req, bs.trailer)
		}
	}
	if taken > 0 || bs.eof {
		bs.cond.Broadcast()
	}
	bs.mu.Unlock()
	if closed {
		bs.drop(taken)
	}
	bs.consume(taken, len(data))
}

// consume drops the n bytes the window took (of m available) from the raw
// input, keeping what the chunk decoder still needs in place.
func (bs *Body) consume(n, m int) {
	if bs.dec.kind != bodyChunked {
		if n == m {
			bs.raw = bs.raw[:0]
		} else {
			bs.raw = bs.raw[:copy(bs.raw, bs.raw[n:])]
		}
		return
	}
	d := &bs.dec
	d.body.lo += int32(n)
	// Trailer fields point into raw: it moves only outside the trailers.
	if d.cphase == chunkTrailer || bs.decoded || d.rpos == 0 {
		return
	}
	if d.body.lo == d.body.hi { // all data taken: the framing read so far goes too
		bs.raw = bs.raw[:copy(bs.raw, bs.raw[d.rpos:])]
		d.body, d.rpos = span{}, 0
		return
	}
	s := int(d.body.lo)
	if s == 0 {
		return
	}
	bs.raw = bs.raw[:copy(bs.raw, bs.raw[s:])]
	d.body.lo -= int32(s)
	d.body.hi -= int32(s)
	d.rpos -= s
}

// drop counts n body bytes nobody reads; past maxDiscard after the
// response the connection closes.
func (bs *Body) drop(n int) {
	bs.dropped += int64(n)
	if bs.discard && bs.dropped > maxDiscard {
		bs.receiving = false
		cs := bs.cs
		cs.set(flagLingering)
		_ = cs.c.Close()
	}
}

// trailers returns the decoded trailers as a header, or nil.
func (bs *Body) trailers() http.Header {
	d := &bs.dec
	if len(d.trailers) == 0 {
		return nil
	}
	h := make(http.Header, len(d.trailers))
	for _, f := range d.trailers {
		k := textproto.CanonicalMIMEHeaderKey(string(f.name.of(bs.raw)))
		h[k] = append(h[k], string(f.value.of(bs.raw)))
	}
	return h
}

// mergeTrailer sets got's values in req.Trailer, as net/http fills it once
// the body is read.
func mergeTrailer(req *http.Request, got http.Header) {
	if req.Trailer == nil {
		req.Trailer = got
		return
	}
	for k, v := range got {
		req.Trailer[k] = v
	}
}

// startBody begins streaming the body of the request whose head is the
// start of b, with the body bytes already received, and returns how many
// bytes of b the request took.
func (cs *conn) startBody(b []byte) (*Body, int) {
	p := &cs.p
	bs := newBody(cs, p)
	n := p.headEnd + bs.feed(b[p.headEnd:])
	if bs.receiving {
		cs.clear(flagMore)
	} else {
		cs.setTo(flagMore, len(b) > n)
	}
	return bs, n
}

// endBody follows the response of a request with a streamed body: the
// handler is done reading. A body still arriving is read and dropped after
// the response (up to maxDiscard) so the connection can serve the next
// request, unless the client still waits for a "100 Continue" it never
// got or more than maxDiscard is to come: then the connection closes.
//
// It runs before the response's last bytes are framed, so that a
// connection to close says so in its head when the head goes with them.
func (cs *conn) endBody() {
	bs := cs.rb
	if bs == nil || bs.discard {
		return
	}
	bs.mu.Lock()
	bs.closeLocked()
	bs.stalled = false
	bs.mu.Unlock()
	if !bs.receiving {
		cs.rb = nil
		return
	}
	if bs.expect && !cs.has(flagContinued) || bs.want > maxDiscard || bs.dropped > maxDiscard {
		cs.set(flagBroken) // the connection ends with this response
		return
	}
	bs.discard = true
	if bs.dec.kind == bodyChunked {
		bs.drop(int(bs.dec.body.hi - bs.dec.body.lo))
		bs.dec.body.lo = bs.dec.body.hi
	} else {
		bs.drop(len(bs.raw))
		bs.raw = bs.raw[:0]
	}
}

// bodyTimeout is what a streamed body's reader gets when the client sends
// nothing for the read timeout.
var bodyTimeout = os.ErrDeadlineExceeded
