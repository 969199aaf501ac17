package httpserver

import (
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/ringloop/ringloop/engine"
)

// Response is the fast API's response writer: status, headers and body are
// buffered and sent once the handler returns, with a Content-Length. Flush
// sends what is buffered at once (chunked for HTTP/1.1 unless a length was
// set, close-delimited for HTTP/1.0). One Response per loop is reused: it is
// valid only during the handler call.
type Response struct {
	status     int
	hdr        []byte // "Name: value\r\n" lines
	body       []byte
	cl         int64 // declared Content-Length; -1 if none
	closeConn  bool
	started    bool // the head is sent (Flush)
	chunked    bool
	noBody     bool  // HEAD, 1xx, 204, 304
	minor      uint8 // the request's HTTP/1.minor
	clientKeep bool  // the client allows keep-alive
	cs         *conn
	deferred   *Deferred
	upgrade    engine.Handler // Upgrade's, once the 101 is sent
	protocol   string
	st         *h2Stream // the request is an HTTP/2 stream's (h2fast.go)
}

func (w *Response) reset(cs *conn, r *Request) {
	w.status, w.cl, w.closeConn, w.started, w.chunked = 200, -1, false, false, false
	w.hdr, w.body = w.hdr[:0], w.body[:0]
	w.cs, w.deferred, w.upgrade = cs, nil, nil
	w.minor, w.clientKeep = r.p.minor, r.p.keepAlive()
	w.noBody = r.p.method.hi-r.p.method.lo == 4 && string(r.p.method.of(r.b)) == "HEAD"
}

// SetStatus sets the status code (default 200); no effect after Flush.
func (w *Response) SetStatus(code int) {
	if !w.started && code >= 100 && code <= 999 {
		w.status = code
	}
}

// AddHeader adds a response header line. Names and values with CR or LF are
// dropped (header injection). Content-Length and Transfer-Encoding are the
// server's: use SetContentLength. "Connection: close" closes the
// connection after this response, as in net/http; other Connection values
// are dropped.
func (w *Response) AddHeader(name, value string) {
	if w.started || name == "" || strings.ContainsAny(name, "\r\n: ") || strings.ContainsAny(value, "\r\n") {
		return
	}
	switch {
	case strings.EqualFold(name, "Content-Length"), strings.EqualFold(name, "Transfer-Encoding"):
		return
	case strings.EqualFold(name, "Connection"):
		if strings.EqualFold(value, "close") {
			w.closeConn = true
		}
		return
	}
	w.hdr = append(w.hdr, name...)
	w.hdr = append(w.hdr, ": "...)
	w.hdr = append(w.hdr, value...)
	w.hdr = append(w.hdr, "\r\n"...)
}

// SetContentLength declares the body length before Flush, so a streamed
// body goes out with a Content-Length rather than chunked.
func (w *Response) SetContentLength(n int64) {
	if !w.started && n >= 0 {
		w.cl = n
	}
}

// Write appends p to the body.
func (w *Response) Write(p []byte) (int, error) {
	w.body = append(w.body, p...)
	return len(p), nil
}

// WriteString appends s to the body.
func (w *Response) WriteString(s string) (int, error) {
	w.body = append(w.body, s...)
	return len(s), nil
}

// Flush sends the head (first time) and the body buffered so far. It cannot
// wait for a slow client (the handler runs on the loop): what a handler
// streams in one call is buffered whole; past the call, the connection's
// watermarks hold the next request back.
func (w *Response) Flush() error {
	cs := w.cs
	if w.deferred != nil {
		return errDeferred
	}
	if cs.has(flagClosed) {
		return errConnGone
	}
	if w.st != nil {
		return w.st.fastFlush(w)
	}
	ls := cs.ls
	out := ls.scratch[:0]
	if !w.started {
		w.started = true
		keep := cs.keepAfter(w.clientKeep, w.closeConn)
		fr := framing{}
		switch {
		case w.noBody || !bodyAllowed(w.status):
			w.noBody = true
		case w.cl >= 0:
			fr.length = w.cl
		case w.minor >= 1:
			fr.chunked, w.chunked = true, true
		default:
			keep = false
		}
		if w.cl < 0 && !fr.chunked {
			fr.length = -1
		}
		cs.setTo(flagKeep, keep)
		out = ls.appendHead(out, w.status, w.minor, keep, fr, w.hdr, true)
	}
	out = w.appendBody(out)
	w.body = w.body[:0]
	ls.scratch = out[:0]
	_, err := cs.c.Write(out)
	return err
}

func (w *Response) appendBody(out []byte) []byte {
	if w.noBody || len(w.body) == 0 {
		return out
	}
	if w.chunked {
		out = strconv.AppendInt(out, int64(len(w.body)), 16)
		out = append(out, "\r\n"...)
		out = append(out, w.body...)
		return append(out, "\r\n"...)
	}
	return append(out, w.body...)
}

// Upgrade answers 101 Switching Protocols to protocol (the Upgrade header's
// value, such as "websocket"), with the headers added so far (a WebSocket's
// Sec-WebSocket-Accept), and then hands the connection to h on this loop,
// with no goroutine: h.OnOpen runs once the 101 is queued, and h.OnData
// receives first the bytes the client sent behind the request. From then
// on the connection is h's (engine.Conn.SetHandler): the server no longer
// counts it, and its Shutdown does not wait for it (the loop's shutdown
// closes it). It fails after Flush, with Defer, and for an HTTP/1.0
// request; body bytes written are not sent (a 101 has none). Over TLS
// (ListenTLS) h reads and writes plaintext: the records stay on the loop.
func (w *Response) Upgrade(protocol string, h engine.Handler) error {
	switch {
	case h == nil || protocol == "" || strings.ContainsAny(protocol, "\r\n"):
		return errUpgradeArgs
	case w.started || w.deferred != nil:
		return errors.New("httpserver: Upgrade after Flush or Defer")
	case w.minor == 0:
		return errors.New("httpserver: Upgrade of an HTTP/1.0 request")
	case w.cs.rb != nil:
		return errors.New("httpserver: Upgrade of a request with a streamed body")
	case w.st != nil:
		return errUpgradeH2
	}
	w.upgrade, w.protocol, w.status = h, protocol, http.StatusSwitchingProtocols
	return nil
}

// finish sends what the handler left: the whole response, or the rest of a
// streamed one.
func (w *Response) finish() {
	cs := w.cs
	if cs.has(flagClosed) {
		return
	}
	if w.st != nil {
		w.st.fastFinish(w)
		return
	}
	ls := cs.ls
	if w.upgrade != nil {
		out := appendStatusLine(ls.scratch[:0], http.StatusSwitchingProtocols)
		out = append(out, w.hdr...)
		out = append(out, "Connection: Upgrade\r\nUpgrade: "...)
		out = append(out, w.protocol...)
		out = append(out, "\r\n\r\n"...)
		ls.scratch = out[:0]
		_, _ = cs.c.Write(out)
		cs.upgrade = w.upgrade
		return
	}
	if w.started {
		out := w.appendBody(ls.scratch[:0])
		if w.chunked {
			out = append(out, "0\r\n\r\n"...)
		}
		ls.scratch = out[:0]
		_, _ = cs.c.Write(out)
		return
	}
	fr := framing{length: int64(len(w.body))}
	if !bodyAllowed(w.status) {
		w.noBody, fr.length = true, -1
	}
	if w.cl >= 0 && fr.length >= 0 {
		// A declared length wins; a body that falls short of it ends with
		// the connection, as net/http does.
		fr.length = w.cl
		if n := int64(len(w.body)); n > w.cl {
			w.body = w.body[:w.cl]
		} else if n < w.cl && !w.noBody {
			w.closeConn = true
		}
	}
	keep := cs.keepAfter(w.clientKeep, w.closeConn)
	cs.setTo(flagKeep, keep)
	out := ls.appendHead(ls.scratch[:0], w.status, w.minor, keep, fr, w.hdr, true)
	if !w.noBody {
		out = append(out, w.body...)
	}
	ls.scratch = out[:0]
	_, _ = cs.c.Write(out)
}

// framing is how a response body is delimited: a length (-1 for none, the
// connection's close ending it or no body at all) or chunked.
type framing struct {
	length  int64
	chunked bool
}

// appendHead appends the status line, Date (date), the handler's
// header lines (hdr) and the framing and Connection headers.
func (ls *loopState) appendHead(out []byte, status int, minor uint8, keep bool, fr framing, hdr []byte, date bool) []byte {
	out = appendStatusLine(out, status)
	if date {
		out = append(out, ls.date...)
	}
	out = append(out, hdr...)
	switch {
	case fr.chunked:
		out = append(out, "Transfer-Encoding: chunked\r\n"...)
	case fr.length >= 0:
		out = append(out, "Content-Length: "...)
		out = strconv.AppendInt(out, fr.length, 10)
		out = append(out, "\r\n"...)
	}
	switch {
	case !keep:
		out = append(out, "Connection: close\r\n"...)
	case minor == 0:
		out = append(out, "Connection: keep-alive\r\n"...)
	}
	return append(out, "\r\n"...)
}

// statusLines caches "HTTP/1.1 code text\r\n" for every code.
var statusLines = func() (t [1000][]byte) {
	for c := 100; c < 1000; c++ {
		text := http.StatusText(c)
		if text == "" {
			text = "status code " + strconv.Itoa(c)
		}
		t[c] = []byte("HTTP/1.1 " + strconv.Itoa(c) + " " + text + "\r\n")
	}
	return t
}()

func appendStatusLine(out []byte, code int) []byte {
	if code < 100 || code > 999 {
		code = 500
	}
	return append(out, statusLines[code]...)
}

// bodyAllowed reports whether a response with this status may have a body.
func bodyAllowed(status int) bool {
	return !(status >= 100 && status <= 199 || status == 204 || status == 304)
}
