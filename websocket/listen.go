package websocket

import (
	"bufio"
	"bytes"
	"errors"
	"net/http"
	"strconv"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/looptls"
)

// maxRequestHead bounds the opening handshake EngineHandler reads; a larger
// one is answered 431.
const maxRequestHead = 8 << 10

// EngineHandler returns an engine.Handler that serves WebSocket on a plain
// engine listener, without an HTTP server: it reads each connection's
// opening handshake itself, answers it (101, or the refusals Upgrade
// sends, then closes), and hands the connection to h on its loop. Every
// path is a WebSocket endpoint. The options are checked once and shared by
// every connection.
//
//	ln, err := engine.Listen(loop, "tcp", addr, websocket.EngineHandler(h))
func EngineHandler(h Handler, opts ...Option) (engine.Handler, error) {
	if h == nil {
		return nil, errors.New("websocket: EngineHandler needs a handler")
	}
	cfg, err := newConfig(opts, false)
	if err != nil {
		return nil, err
	}
	return &handshaker{h: h, cfg: cfg}, nil
}

type handshaker struct {
	h   Handler
	cfg *config
}

func (s *handshaker) OnOpen(ec *engine.Conn) {}

// OnData reads the handshake and hands the connection to its Conn.
func (s *handshaker) OnData(ec *engine.Conn, b []byte) {
	if c, end := s.read(transport{ec: ec}, b); c != nil {
		if err := ec.SetHandler((*engineSide)(c), b[end:]); err != nil {
			_ = ec.CloseWithError(err)
		}
	}
}

// OnClose: a connection that ends before its handshake was never h's.
func (s *handshaker) OnClose(ec *engine.Conn, err error) {}

// TLSHandler is EngineHandler for wss: the looptls.Handler that reads each
// TLS connection's opening handshake, in plaintext on the loop, and hands
// the connection to h there, its records staying on the loop.
//
//	wh, err := websocket.TLSHandler(h)
//	ln, err := engine.Listen(loop, "tcp", addr, looptls.Server(wh, tlsConfig))
func TLSHandler(h Handler, opts ...Option) (looptls.Handler, error) {
	s, err := EngineHandler(h, opts...)
	if err != nil {
		return nil, err
	}
	return (*tlsHandshaker)(s.(*handshaker)), nil
}

// tlsHandshaker is the handshaker as a looptls.Handler.
type tlsHandshaker handshaker

func (s *tlsHandshaker) OnOpen(tc *looptls.Conn) {}

func (s *tlsHandshaker) OnData(tc *looptls.Conn, b []byte) {
	if c, end := (*handshaker)(s).read(transport{ec: tc.Engine(), tc: tc}, b); c != nil {
		if err := tc.SetHandler((*tlsSide)(c), b[end:]); err != nil {
			_ = tc.CloseWithError(err)
		}
	}
}

func (s *tlsHandshaker) OnClose(tc *looptls.Conn, err error) {}

// read waits for the whole request head, then answers it: on a valid
// handshake it returns the Conn to hand the connection to and where the
// bytes behind the head start; otherwise nil (more to come, or refused
// and closing).
func (s *handshaker) read(t transport, b []byte) (*Conn, int) {
	end := bytes.Index(b, []byte("\r\n\r\n"))
	if end < 0 {
		if len(b) >= maxRequestHead {
			s.refuse(t, &refusal{status: http.StatusRequestHeaderFieldsTooLarge, why: "request head too large"})
			return nil, 0
		}
		if err := t.Keep(b); err != nil {
			_ = t.CloseWithError(err)
		}
		return nil, 0
	}
	end += 4
	if end > maxRequestHead {
		s.refuse(t, &refusal{status: http.StatusRequestHeaderFieldsTooLarge, why: "request head too large"})
		return nil, 0
	}
	req, err := http.ReadRequest(bufio.NewReader(bytes.NewReader(b[:end])))
	if err != nil {
		s.refuse(t, &refusal{status: http.StatusBadRequest, why: "malformed request"})
		return nil, 0
	}
	a, ref := check(stdRequest{req}, s.cfg)
	if ref != nil {
		s.refuse(t, ref)
		return nil, 0
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
	if err := t.Write(out); err != nil {
		return nil, 0
	}
	return &Conn{h: s.h, cfg: s.cfg, subprotocol: a.subprotocol, deflate: a.deflate}, end
}

// refuse answers an error status and closes the connection.
func (s *handshaker) refuse(t transport, ref *refusal) {
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
	_ = t.Write(out)
	_ = t.CloseWithError(ref)
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
