package websocket

import (
	"bufio"
	"bytes"
	"net/http"
	"strconv"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/tasks"
)

// maxRequestHead bounds the opening handshake EngineHandler reads; a larger
// one is answered 431.
const maxRequestHead = 8 << 10

// EngineHandler returns an engine.Handler that serves WebSocket on a plain
// engine listener, without an HTTP server: it reads each connection's
// opening handshake itself, answers it (101, or the refusals Upgrade
// sends, then closes), and hands the connection to h on its loop. Every
// path is a WebSocket endpoint. The options are checked once and shared by
// every connection. A connection whose request head is not whole within
// Timeouts.Handshake of its opening (default 10 s: a client that sends
// nothing, or trickles its request) is closed without an answer, its
// error matching ErrTimeout.
//
//	h, err := websocket.EngineHandler(chat, websocket.WithAllowedOrigins("https://app.example"))
//	if err != nil {
//		log.Fatal(err) // an option EngineHandler does not take, say
//	}
//	ln, err := engine.Listen(loop, "tcp", ":8080", h)
//
// For wss, TLS is the connection's transport: serve the same handler under
// looptls.Server, which bounds the TLS handshake by its own
// WithHandshakeTimeout (10 s by default too) before Timeouts.Handshake
// starts, as net/http bounds both by ReadHeaderTimeout:
//
//	ln, err := engine.Listen(loop, "tcp", ":8443", looptls.Server(h, tlsConfig))
func EngineHandler(h Handler, opts ...Option) (engine.Handler, error) {
	s, err := newHandshaker("EngineHandler", h, opts)
	if err != nil {
		return nil, err
	}
	return s, nil
}

func newHandshaker(caller string, h Handler, opts []Option) (*handshaker, error) {
	cfg, err := newConfig(opts, caller, siteListener)
	if err != nil {
		return nil, err
	}
	if h == nil {
		return nil, errNilHandler(caller)
	}
	return &handshaker{h: h, cfg: cfg}, nil
}

type handshaker struct {
	h   Handler
	cfg *config
}

// errHandshakeTimeout is why a listener's connection whose request head
// did not arrive within the handshake timeout was closed (an
// engine.ConnObserver sees it).
var errHandshakeTimeout error = timeoutError("websocket: opening handshake not whole within Timeouts.Handshake")

// pending is a listener's connection until its handshake is answered: the
// timer that closes it when the head is late.
type pending struct {
	ec    *engine.Conn
	timer tasks.Future[struct{}]
}

// Run is the handshake timeout.
func (p *pending) Run() {
	p.timer = nil
	_ = p.ec.CloseWithError(errHandshakeTimeout)
}

// start arms the handshake timeout; the loop is shutting down when it
// cannot, and the connection is closed.
func (s *handshaker) start(ec *engine.Conn) *pending {
	p := &pending{ec: ec}
	tm, err := ec.Loop().Schedule(p, s.cfg.handshakeTimeout)
	if err != nil {
		_ = ec.CloseWithError(err)
		return nil
	}
	p.timer = tm
	return p
}

// stop disarms the timeout: the head is answered, or the connection gone.
func (p *pending) stop() {
	if p != nil && p.timer != nil {
		p.timer.Cancel()
		p.timer = nil
	}
}

func (s *handshaker) OnOpen(ec *engine.Conn) {
	if p := s.start(ec); p != nil {
		ec.SetValue(p)
	}
}

// OnData reads the handshake and hands the connection to its Conn.
func (s *handshaker) OnData(ec *engine.Conn, b []byte) {
	p, _ := ec.Value().(*pending)
	c, end, done := s.read(ec, b)
	if !done {
		return
	}
	p.stop()
	ec.SetValue(nil)
	if c != nil {
		if err := ec.SetHandler((*engineSide)(c), b[end:]); err != nil {
			_ = ec.CloseWithError(err)
		}
	}
}

// OnClose: a connection that ends before its handshake was never h's.
func (s *handshaker) OnClose(ec *engine.Conn, err error) {
	p, _ := ec.Value().(*pending)
	p.stop()
}

// read waits for the whole request head, then answers it: done once it is
// answered (or the connection failed), and then, on a valid handshake, the
// Conn to hand the connection to and where the bytes behind the head start
// (nil when refused and closing).
func (s *handshaker) read(ec *engine.Conn, b []byte) (c *Conn, end int, done bool) {
	end = bytes.Index(b, []byte("\r\n\r\n"))
	if end < 0 {
		if len(b) >= maxRequestHead {
			s.refuse(ec, &refusal{status: http.StatusRequestHeaderFieldsTooLarge, why: "request head too large"})
			return nil, 0, true
		}
		if err := ec.Keep(b); err != nil {
			_ = ec.CloseWithError(err)
			return nil, 0, true
		}
		return nil, 0, false
	}
	end += 4
	if end > maxRequestHead {
		s.refuse(ec, &refusal{status: http.StatusRequestHeaderFieldsTooLarge, why: "request head too large"})
		return nil, 0, true
	}
	req, err := http.ReadRequest(bufio.NewReader(bytes.NewReader(b[:end])))
	if err != nil {
		s.refuse(ec, &refusal{status: http.StatusBadRequest, why: "malformed request"})
		return nil, 0, true
	}
	a, ref := check(stdRequest{req}, s.cfg)
	if ref != nil {
		s.refuse(ec, ref)
		return nil, 0, true
	}
	out := append([]byte(nil), "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: "...)
	out = append(out, a.accept...)
	if a.subprotocol != "" {
		out = append(out, "\r\nSec-WebSocket-Protocol: "...)
		out = append(out, a.subprotocol...)
	}
	if a.deflate {
		out = append(out, "\r\nSec-WebSocket-Extensions: "+extensionAnswer...)
	}
	out = append(out, "\r\n\r\n"...)
	if _, err := ec.Write(out); err != nil {
		return nil, 0, true
	}
	return &Conn{h: s.h, cfg: s.cfg, subprotocol: a.subprotocol, deflate: a.deflate}, end, true
}

// refuse answers an error status and closes the connection.
func (s *handshaker) refuse(ec *engine.Conn, ref *refusal) {
	body := ref.why + "\n"
	out := append([]byte(nil), "HTTP/1.1 "...)
	out = strconv.AppendInt(out, int64(ref.status), 10)
	out = append(out, ' ')
	out = append(out, http.StatusText(ref.status)...)
	out = append(out, "\r\nConnection: close\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: "...)
	out = strconv.AppendInt(out, int64(len(body)), 10)
	if ref.header != "" {
		out = append(out, "\r\n"...)
		out = append(out, ref.header...)
		out = append(out, ": "...)
		out = append(out, ref.hval...)
	}
	out = append(out, "\r\n\r\n"...)
	out = append(out, body...)
	_, _ = ec.Write(out)
	_ = ec.CloseWithError(ref)
}

// stdRequest is a parsed net/http request as a handshakeRequest.
type stdRequest struct{ r *http.Request }

func (s stdRequest) method() string  { return s.r.Method }
func (s stdRequest) protoMinor() int { return s.r.ProtoMinor }
func (s stdRequest) values(name string, fn func([]byte) bool) bool {
	if http.CanonicalHeaderKey(name) == "Host" {
		return fn([]byte(s.r.Host))
	}
	for _, v := range s.r.Header.Values(name) {
		if fn([]byte(v)) {
			return true
		}
	}
	return false
}
