package httpserver

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/textproto"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/internal/loopctl"
	"github.com/ringloop/ringloop/internal/panicstack"
)

// stdRequest is one request served by an http.Handler. The fields after
// "loop side" are the loop's, the writer is the handler goroutine's; they
// meet in chunk tasks and the ack.
type stdRequest struct {
	s      *Server
	loop   *engine.Loop
	req    *http.Request
	ctx    reqContext // req's context, cancelled with why the connection ended, if it did
	minor  uint8
	keep   bool // the client allows keep-alive
	isHEAD bool
	inline bool
	dead   atomic.Bool           // the connection is gone
	why    atomic.Pointer[error] // a timeout that ended it (deadline.go), set before dead; nil: errConnGone says it
	ack    sync.WaitGroup        // one Add per chunk handed over mid-handler, Done when the loop took it (no channel to allocate)
	w      stdWriter
	url    url.URL // req.URL for a plain target (plainTarget)
	ck     chunk   // the chunk handed over mid-handler: one at a time (its ack is waited for before the next), so one serves all
	end    chunk   // the last chunk, apart: over HTTP/2 it may follow ck before ck's ack
	behind bool    // handler side: ck went to an HTTP/2 stream and its ack is still to wait for

	// loop side
	cs      *conn
	waiting bool      // the goroutine waits for the connection to turn writable (over HTTP/2: for its stream's data to leave)
	h2      *h2Stream // the request is an HTTP/2 stream's (h2adapter.go)
}

// serveStd serves the request r with the http.Handler: inline, or on a new
// goroutine with the response written back on the loop.
func (cs *conn) serveStd(r *Request) {
	if string(r.Target()) == "*" && r.Method() == "OPTIONS" {
		cs.optionsStar(r)
		return
	}
	cs.initBase()
	sr := &stdRequest{
		s: cs.s, loop: cs.c.Loop(), minor: r.p.minor, keep: r.p.keepAlive(),
		inline: cs.s.cfg.inline, cs: cs,
	}
	sr.ctx.parent = cs.base
	req, err := cs.newHTTPRequest(r, &sr.ctx, &sr.url)
	if err != nil {
		cs.refuse(err)
		return
	}
	req.RemoteAddr = cs.remote
	req.TLS = cs.tlsState()
	sr.req, sr.isHEAD = req, req.Method == "HEAD"
	sr.w.sr = sr
	if bs := r.stream; bs != nil {
		// The handler's request is the one whose Trailer fills at the
		// body's end.
		bs.req = sr.req
		if bs.eof && bs.trailer != nil {
			mergeTrailer(sr.req, bs.trailer)
		}
	}
	cs.inflight = sr
	cs.set(flagBusy)
	if sr.inline {
		sr.Run()
		return
	}
	cs.ls.pool.Go(sr)
}

// initBase makes, once per connection, the parent of its requests'
// contexts and its client's address string.
func (cs *conn) initBase() {
	if cs.base != nil {
		return
	}
	cfg := cs.s.cfg
	cs.base = context.WithValue(cfg.baseCtx, http.LocalAddrContextKey, cs.c.LocalAddr())
	if cfg.connCtx != nil {
		if ctx := cfg.connCtx(cs.base, cs.c); ctx != nil {
			cs.base = ctx
		}
	}
	if a := cs.c.RemoteAddr(); a != nil {
		cs.remote = a.String()
	}
}

// optionsStar answers "OPTIONS *" as net/http does, without the handler.
func (cs *conn) optionsStar(r *Request) {
	keep := cs.keepAfter(r.p.keepAlive(), false)
	cs.setTo(flagKeep, keep)
	out := cs.ls.appendHead(cs.ls.scratch[:0], 200, r.p.minor, keep, framing{length: 0}, nil, true)
	cs.ls.scratch = out[:0]
	_, _ = cs.c.Write(out)
}

// newHTTPRequest builds the *http.Request net/http would build from the same
// bytes, with the context ctx. A plain target's URL is parsed into into, a
// field of the request's state (one allocation fewer).
func (cs *conn) newHTTPRequest(r *Request, ctx context.Context, into *url.URL) (*http.Request, *parseError) {
	p := r.p
	// One string holds the whole head; the target, names and values are
	// substrings of it (one allocation instead of one per string).
	head := string(r.b[:p.headEnd])
	target := head[p.target.lo:p.target.hi]
	var u *url.URL
	var err error
	if string(r.MethodBytes()) == "CONNECT" && !strings.HasPrefix(target, "/") {
		into.Host = target
		u = into
	} else if plainTarget(target, into) {
		u = into
	} else if u, err = url.ParseRequestURI(target); err != nil {
		return nil, errMalformed
	}
	// Host goes to req.Host, not into the map (net/http deletes it), and
	// the values of all other lines share one backing array.
	var h http.Header
	var vals []string
	host, haveHost := "", false
	for _, f := range p.fields {
		k := textproto.CanonicalMIMEHeaderKey(head[f.name.lo:f.name.hi])
		v := head[f.value.lo:f.value.hi]
		if k == "Host" {
			if !haveHost {
				host, haveHost = v, true
			}
			continue
		}
		if h == nil {
			h = make(http.Header, len(p.fields))
			vals = make([]string, 0, len(p.fields))
		}
		if old, ok := h[k]; ok {
			h[k] = append(old[:len(old):len(old)], v) // a repeated key gets its own array
			continue
		}
		vals = append(vals, v)
		h[k] = vals[len(vals)-1 : len(vals) : len(vals)]
	}
	if h == nil {
		h = http.Header{}
	}
	// The request is built on the stack and WithContext makes the one
	// copy the handler gets.
	req := &http.Request{
		Method:     r.Method(),
		URL:        u,
		Proto:      r.Proto(),
		ProtoMajor: 1,
		ProtoMinor: int(p.minor),
		Header:     h,
		Host:       u.Host,
		RequestURI: target,
		Close:      !p.keepAlive(),
		Body:       http.NoBody,
	}
	if req.Host == "" {
		req.Host = host
	}
	if pr, ok := h["Pragma"]; ok && len(pr) > 0 && pr[0] == "no-cache" {
		if _, ok := h["Cache-Control"]; !ok {
			h["Cache-Control"] = []string{"no-cache"}
		}
	}
	body := r.Body()
	if p.kind == bodyChunked {
		delete(h, "Transfer-Encoding")
		req.TransferEncoding = []string{"chunked"}
		req.ContentLength = -1
		if tr, err := declaredTrailers(h); err != nil {
			return nil, err
		} else {
			req.Trailer = tr
		}
		if len(p.trailers) > 0 {
			got := make(http.Header, len(p.trailers))
			for i := range p.trailers {
				n, v := r.TrailerAt(i)
				k := textproto.CanonicalMIMEHeaderKey(string(n))
				got[k] = append(got[k], string(v))
			}
			if req.Trailer == nil {
				req.Trailer = got
			} else {
				for k, v := range got {
					req.Trailer[k] = v
				}
			}
		}
	} else {
		req.ContentLength = r.ContentLength()
	}
	if r.stream != nil {
		req.Body = r.stream
	} else if len(body) > 0 || p.kind == bodyChunked {
		req.Body = io.NopCloser(bytes.NewReader(bytes.Clone(body)))
	}
	return req.WithContext(ctx), nil
}

// declaredTrailers reads the Trailer header of a chunked request (and
// removes it), as net/http does.
func declaredTrailers(h http.Header) (http.Header, *parseError) {
	vv, ok := h["Trailer"]
	if !ok {
		return nil, nil
	}
	delete(h, "Trailer")
	tr := http.Header{}
	for _, v := range vv {
		for _, k := range strings.Split(v, ",") {
			k = textproto.CanonicalMIMEHeaderKey(textproto.TrimString(k))
			switch k {
			case "Transfer-Encoding", "Trailer", "Content-Length":
				return nil, &parseError{400, "bad trailer key"}
			}
			if k != "" {
				tr[k] = nil
			}
		}
	}
	return tr, nil
}

// Run calls the handler and sends what it left (on a worker, or inline on
// the loop).
func (sr *stdRequest) Run() {
	w := &sr.w
	defer func() {
		if p := recover(); p != nil {
			logPanic(sr.s.logger(), p, nil)
			sr.ctx.cancel(nil)
			if !w.hijacked { // a hijacked connection is the handler's
				sr.end = chunk{abort: true, last: true}
				sr.send(&sr.end)
			}
			return
		}
	}()
	sr.s.std.ServeHTTP(w, sr.req)
	sr.ctx.cancel(nil)
	if !w.hijacked {
		w.finish()
	}
}

// logPanic logs a handler's panic with where it happened and its frames, except
// http.ErrAbortHandler (a handler's way to abort silently).
func logPanic(l *slog.Logger, p any, c *engine.Conn) {
	if p == http.ErrAbortHandler {
		return
	}
	attrs := panicstack.Attrs(p) // "at" and the frames as a list: see package panicstack
	if c != nil {
		attrs = append(attrs, slog.Any("remote", c.RemoteAddr()))
	}
	l.LogAttrs(context.Background(), slog.LevelError, "httpserver: handler panicked", attrs...)
}

// chunk is what the handler's goroutine hands to the loop: the head (once),
// framed body bytes, and whether the response is complete.
type chunk struct {
	sr       *stdRequest
	head     bool
	status   int
	hdr      []byte
	date     bool
	fr       framing
	keep     bool
	data     []byte
	last     bool
	abort    bool
	trailers []byte // chunked trailer section (last chunk only)
}

// send hands c to the loop (or writes it, inline) and, for a chunk sent
// mid-handler, waits until the connection can take more: over HTTP/1.1
// at once, over HTTP/2 before the next chunk mid-handler (flushOut), so
// that a handler that flushes and then ends (grpc-go's ServeHTTP, each
// RPC) does not wait in between for the loop, which takes its chunks in
// order.
func (sr *stdRequest) send(c *chunk) bool {
	c.sr = sr
	if sr.inline {
		c.Run()
		return !sr.dead.Load()
	}
	if sr.dead.Load() && (!c.last || sr.h2 == nil) {
		return false // (an HTTP/2 stream's loop counts its handlers: it hears of the end)
	}
	// The loop's control ring (package loopctl), never its task ring: a
	// user's engine.WithMaxPendingTasks must not drop a response and hang
	// the connection. One chunk per request is in flight (the handler
	// waits for its ack), which bounds what a request puts there. It is
	// refused only once the loop has shut down, which closed the
	// connection.
	if !c.last {
		sr.ack.Add(1) // before the loop can see the chunk and call Done
	}
	if err := loopctl.Run(sr.loop, c); err != nil {
		if !c.last {
			sr.ack.Done()
		}
		sr.dead.Store(true)
		return false
	}
	if c.last {
		return true
	}
	if sr.h2 != nil {
		sr.behind = true
		return !sr.dead.Load()
	}
	sr.ack.Wait()
	return !sr.dead.Load()
}

// caughtUp waits for the ack of the chunk an HTTP/2 stream was handed
// last: ck is free again, and the handler no further ahead of its client
// than one chunk.
func (sr *stdRequest) caughtUp() {
	if sr.behind {
		sr.behind = false
		sr.ack.Wait()
	}
}

// Run writes the chunk on the loop.
func (c *chunk) Run() {
	sr := c.sr
	if sr.h2 != nil {
		sr.h2.runChunk(c)
		return
	}
	cs := sr.cs
	if cs.has(flagClosed) || sr.dead.Load() { // closed, or reset and closing (timeoutWrite)
		if !c.last && !sr.inline {
			sr.ack.Done()
		}
		return
	}
	if c.abort {
		cs.inflight = nil
		cs.clear(flagBusy)
		cs.set(flagLingering)
		_ = cs.c.Abort()
		return
	}
	if c.last {
		cs.endBody()
	}
	ls := cs.ls
	out := ls.scratch[:0]
	if c.head {
		keep := cs.keepAfter(sr.keep, !c.keep)
		if c.fr.length < 0 && !c.fr.chunked && bodyAllowed(c.status) && !sr.isHEAD {
			keep = false // close-delimited
		}
		cs.setTo(flagKeep, keep)
		out = ls.appendHead(out, c.status, sr.minor, keep, c.fr, c.hdr, c.date)
	}
	out = append(out, c.data...)
	if c.last && c.fr.chunked {
		out = append(out, "0\r\n"...)
		out = append(out, c.trailers...)
		out = append(out, "\r\n"...)
	}
	ls.scratch = out[:0]
	_, _ = cs.c.Write(out)
	if !c.last {
		if sr.inline {
			return
		}
		if cs.c.Writable() {
			sr.ack.Done()
		} else {
			sr.waiting = true
		}
		return
	}
	cs.inflight = nil
	cs.clear(flagBusy)
	if cs.responded() && !sr.inline {
		cs.serveBuffered()
		cs.afterServe()
	}
}

// writable wakes a goroutine waiting for the connection to drain.
func (sr *stdRequest) writable(w bool) {
	if w && sr.waiting {
		sr.waiting = false
		sr.ack.Done()
	}
}

// gone tells the handler the connection ended for cause: its context is
// cancelled with it and its writes fail from now on (with cause itself
// when it is a timeout of the server's).
func (sr *stdRequest) gone(cause error) {
	if errors.Is(cause, os.ErrDeadlineExceeded) {
		sr.why.CompareAndSwap(nil, &cause)
	}
	sr.dead.Store(true)
	sr.ctx.cancel(cause)
	if sr.waiting {
		sr.waiting = false
		sr.ack.Done()
	}
}

// goneErr is what the handler's writes return once the connection is gone.
func (sr *stdRequest) goneErr() error {
	if p := sr.why.Load(); p != nil {
		return *p
	}
	return errConnGone
}

// stdWriter is the http.ResponseWriter and http.Flusher of the adapter. Like
// net/http it buffers up to 2 KiB of body before sending the head, so a
// short response gets a Content-Length and a sniffed Content-Type.
type stdWriter struct {
	sr        *stdRequest
	header    http.Header
	status    int
	committed bool
	noBody    bool
	chunked   bool
	cl        int64 // declared Content-Length, -1 if none
	written   int64
	buf       []byte
	fr        framing
	hijacked  bool
	small     [512]byte // buf's first backing: a short body costs no allocation of its own
	hdrRoom   [256]byte // the head's header lines, likewise
}

const bufferBeforeHead = 2048

// Header returns the response header map.
func (w *stdWriter) Header() http.Header {
	if w.header == nil {
		w.header = make(http.Header)
	}
	return w.header
}

// WriteHeader records the status; headers set later are not sent.
func (w *stdWriter) WriteHeader(code int) {
	if w.status != 0 || w.hijacked {
		return
	}
	if code < 100 || code > 999 {
		panic(fmt.Sprintf("invalid WriteHeader code %v", code))
	}
	if code >= 100 && code <= 199 && code != 101 {
		return // informational responses are not forwarded (see the package doc)
	}
	w.status = code
	w.cl = -1
	if v := w.Header().Get("Content-Length"); v != "" {
		if n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil && n >= 0 {
			w.cl = n
		} else {
			w.header.Del("Content-Length")
		}
	}
	w.noBody = w.sr.isHEAD || !bodyAllowed(code)
}

// Write sends body bytes (buffered; see Flush).
func (w *stdWriter) Write(p []byte) (int, error) {
	if w.hijacked {
		return 0, http.ErrHijacked
	}
	if w.status == 0 {
		w.WriteHeader(http.StatusOK)
	}
	if w.sr.dead.Load() {
		return 0, w.sr.goneErr()
	}
	if len(p) == 0 {
		return 0, nil
	}
	if !bodyAllowed(w.status) {
		return 0, http.ErrBodyNotAllowed
	}
	if w.cl >= 0 && w.written+int64(len(p)) > w.cl {
		return 0, http.ErrContentLength
	}
	w.written += int64(len(p))
	if w.buf == nil && !w.committed {
		w.buf = w.small[:0]
	}
	if !w.committed {
		w.buf = append(w.buf, p...)
		if len(w.buf) > bufferBeforeHead {
			if !w.flushOut(false) {
				return 0, w.sr.goneErr()
			}
		}
		return len(p), nil
	}
	w.appendData(p)
	if len(w.buf) >= 4<<10 && !w.flushOut(false) {
		return 0, w.sr.goneErr()
	}
	return len(p), nil
}

// WriteString is Write for a string.
func (w *stdWriter) WriteString(s string) (int, error) { return w.Write([]byte(s)) }

func (w *stdWriter) appendData(p []byte) {
	if w.chunked {
		w.buf = strconv.AppendInt(w.buf, int64(len(p)), 16)
		w.buf = append(w.buf, "\r\n"...)
		w.buf = append(w.buf, p...)
		w.buf = append(w.buf, "\r\n"...)
		return
	}
	w.buf = append(w.buf, p...)
}

// Flush sends the head and the body written so far, and waits while the
// client is slower than the handler (the connection over its high
// watermark).
func (w *stdWriter) Flush() {
	if w.status == 0 {
		w.WriteHeader(http.StatusOK)
	}
	w.flushOut(false)
}

// FlushError is Flush reporting a client that went away.
func (w *stdWriter) FlushError() error {
	if w.status == 0 {
		w.WriteHeader(http.StatusOK)
	}
	if !w.flushOut(false) {
		return w.sr.goneErr()
	}
	return nil
}

// flushOut hands the buffered bytes to the loop; done marks the end of the
// response.
func (w *stdWriter) flushOut(done bool) bool {
	sr := w.sr
	if !done && w.committed && len(w.buf) == 0 && sr.h2 != nil {
		// Nothing to hand over an HTTP/2 stream: grpc-go's ServeHTTP
		// flushes so before its trailers, each RPC. What the last flush
		// handed over is waited for at the next that hands some.
		return !sr.dead.Load()
	}
	c := &sr.end
	if !done {
		sr.caughtUp()
		c = &sr.ck
	}
	*c = chunk{last: done}
	if !w.committed {
		w.commit(c, done)
	}
	if !w.noBody {
		c.data = w.buf
	}
	c.fr = w.fr
	if done && (w.chunked || w.sr.h2 != nil) {
		c.trailers = w.trailerBytes()
	}
	w.buf = nil
	return w.sr.send(c)
}

// commit decides the head the way net/http does and puts it in c; the body
// buffered so far becomes the first data.
func (w *stdWriter) commit(c *chunk, done bool) {
	w.committed = true
	h := w.header // nil when the handler set none: reads and deletes work on it
	body := w.buf
	c.head, c.status, c.keep = true, w.status, true
	// A sniffed Content-Type goes on the wire, not into the handler's map
	// (as net/http): no map entry to allocate.
	sniffed := ""
	if _, ok := h["Content-Type"]; !ok && bodyAllowed(w.status) && len(body) > 0 && h.Get("Transfer-Encoding") == "" {
		sniffed = http.DetectContentType(body[:min(len(body), 512)])
	}
	if v := h.Get("Connection"); v != "" {
		c.keep = !strings.EqualFold(v, "close")
		h.Del("Connection")
	}
	h.Del("Transfer-Encoding")
	if w.status == http.StatusNotModified {
		h.Del("Content-Type")
		h.Del("Content-Length")
		w.cl, sniffed = -1, ""
	}
	_, c.date = h["Date"]
	c.date = !c.date
	fr := framing{length: -1}
	switch {
	case w.cl >= 0:
		fr.length = w.cl
		h.Del("Content-Length")
	case !bodyAllowed(w.status):
	case done && (!w.sr.isHEAD || len(body) > 0):
		fr.length = int64(len(body))
	case w.sr.isHEAD:
	case w.sr.minor >= 1:
		fr.chunked = true
	}
	if _, ok := h["Trailer"]; ok && !fr.chunked && fr.length < 0 && w.sr.minor >= 1 && !w.noBody {
		fr.chunked = true
	}
	w.fr, w.chunked = fr, fr.chunked && !w.noBody && w.sr.h2 == nil // HTTP/2 frames bodies itself
	c.hdr = appendHeader(w.hdrRoom[:0], h, func(k string) bool { return strings.HasPrefix(k, http.TrailerPrefix) })
	if sniffed != "" {
		c.hdr = append(c.hdr, "Content-Type: "...)
		c.hdr = append(c.hdr, sniffed...)
		c.hdr = append(c.hdr, "\r\n"...)
	}
	if w.chunked && len(body) > 0 {
		w.buf = nil
		w.appendData(body)
	}
}

// finish completes the response after the handler returned.
func (w *stdWriter) finish() {
	if w.status == 0 {
		w.WriteHeader(http.StatusOK)
	}
	w.flushOut(true)
}

// trailerBytes serialises the response trailers: the values of keys declared
// in the Trailer header, and TrailerPrefix keys (which win over a declared
// key of the same name), sorted by key as appendHeader does.
func (w *stdWriter) trailerBytes() []byte {
	h := w.header
	type trailer struct {
		name string
		vv   []string
	}
	var room [8]trailer // grpc-go's three: no allocation for the list
	tr := room[:0]
	add := func(name string, vv []string, prefixed bool) {
		for i := range tr {
			if tr[i].name == name {
				if prefixed {
					tr[i].vv = vv
				}
				return
			}
		}
		tr = append(tr, trailer{name, vv})
	}
	for _, v := range h["Trailer"] {
		for v != "" {
			k := v
			if i := strings.IndexByte(v, ','); i >= 0 {
				k, v = v[:i], v[i+1:]
			} else {
				v = ""
			}
			k = http.CanonicalHeaderKey(strings.TrimSpace(k))
			if vv, ok := h[k]; ok {
				add(k, vv, false)
			}
		}
	}
	for k, vv := range h {
		if name, ok := strings.CutPrefix(k, http.TrailerPrefix); ok {
			add(name, vv, true)
		}
	}
	slices.SortFunc(tr, func(a, b trailer) int { return strings.Compare(a.name, b.name) })
	var out []byte
	for _, t := range tr {
		for _, v := range t.vv {
			if strings.ContainsAny(v, "\r\n") || strings.ContainsAny(t.name, "\r\n: ") {
				continue
			}
			out = append(out, t.name...)
			out = append(out, ": "...)
			out = append(out, strings.TrimSpace(v)...)
			out = append(out, "\r\n"...)
		}
	}
	return out
}

// appendHeader serialises h sorted by key (as net/http), dropping keys skip
// matches and values with CR or LF.
func appendHeader(out []byte, h http.Header, skip func(string) bool) []byte {
	var room [16]string // most responses have fewer keys: no allocation for the list
	keys := room[:0]
	for k := range h {
		if skip == nil || !skip(k) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		for _, v := range h[k] {
			if strings.ContainsAny(v, "\r\n") || strings.ContainsAny(k, "\r\n: ") {
				continue
			}
			out = append(out, k...)
			out = append(out, ": "...)
			out = append(out, strings.TrimSpace(v)...)
			out = append(out, "\r\n"...)
		}
	}
	return out
}

// plainTarget parses an origin-form target made only of letters, digits,
// "-._~/" in its path and printable ASCII other than '#' in its query into
// u, as url.ParseRequestURI would (TestPlainTarget compares the two), and
// reports whether it could. Other targets go to url.ParseRequestURI.
func plainTarget(target string, u *url.URL) bool {
	if len(target) < 1 || target[0] != '/' || strings.HasPrefix(target, "//") {
		return false
	}
	path, query, hasQuery := strings.Cut(target, "?")
	for i := 0; i < len(path); i++ {
		c := path[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~' || c == '/') {
			return false
		}
	}
	for i := 0; i < len(query); i++ {
		if c := query[i]; c <= ' ' || c >= 0x7f || c == '#' {
			return false
		}
	}
	u.Path = path
	u.RawQuery = query
	u.ForceQuery = hasQuery && query == ""
	return true
}
