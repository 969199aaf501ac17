package websocket

import (
	"bytes"
	"crypto/sha1"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"

	"github.com/ringloop/ringloop/httpserver"
)

// acceptGUID is RFC 6455's fixed key suffix (§1.3).
const acceptGUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

// acceptKey is Sec-WebSocket-Accept for a client's Sec-WebSocket-Key: the
// base64 of SHA-1(key + GUID) (§4.2.2).
func acceptKey(key []byte) string {
	h := sha1.New()
	h.Write(key)
	h.Write([]byte(acceptGUID))
	return base64.StdEncoding.EncodeToString(h.Sum(nil))
}

// ErrHandshake matches (errors.Is) every refused upgrade request, and every
// Dial whose server refused the handshake or answered it wrongly
// (HandshakeError).
var ErrHandshake = errors.New("websocket: bad handshake")

// handshakeRequest is what the handshake reads of a request, from
// httpserver's fast API or from the request EngineHandler parses.
type handshakeRequest interface {
	method() string
	protoMinor() int
	headerSource
}

// headerSource gives a request's or an answer's header fields.
type headerSource interface {
	// values calls fn with each value of the named header, in order, until
	// fn returns true.
	values(name string, fn func(v []byte) bool) bool
}

// refusal is a handshake answered with an error status.
type refusal struct {
	status       int
	header, hval string // one extra header line, if any
	why          string
}

func (r *refusal) Error() string { return fmt.Sprintf("%v: %d %s", ErrHandshake, r.status, r.why) }
func (r *refusal) Unwrap() error { return ErrHandshake }

// accepted is a valid handshake's answer.
type accepted struct {
	accept, subprotocol string
	deflate             bool // permessage-deflate accepted (extensionAnswer)
}

// check validates an opening handshake (RFC 6455 §4.2.1).
func check(r handshakeRequest, cfg *config) (accepted, *refusal) {
	switch {
	case r.method() != http.MethodGet:
		return accepted{}, &refusal{http.StatusMethodNotAllowed, "Allow", "GET", "a WebSocket handshake is a GET"}
	case r.protoMinor() < 1:
		return accepted{}, &refusal{status: http.StatusBadRequest, why: "a WebSocket handshake needs HTTP/1.1"}
	case !hasToken(r, "Upgrade", "websocket"):
		return accepted{}, &refusal{status: http.StatusBadRequest, why: "Upgrade: websocket missing"}
	case !hasToken(r, "Connection", "upgrade"):
		return accepted{}, &refusal{status: http.StatusBadRequest, why: "Connection: upgrade missing"}
	case string(bytes.TrimSpace(first(r, "Sec-WebSocket-Version"))) != "13":
		return accepted{}, &refusal{http.StatusUpgradeRequired, "Sec-WebSocket-Version", "13", "Sec-WebSocket-Version 13 required"}
	}
	key := bytes.TrimSpace(first(r, "Sec-WebSocket-Key"))
	var raw [18]byte
	if n, err := base64.StdEncoding.Decode(raw[:], key); err != nil || n != 16 || len(key) != 24 {
		return accepted{}, &refusal{status: http.StatusBadRequest, why: "Sec-WebSocket-Key is not 16 bytes in base64"}
	}
	if origin, present := firstOK(r, "Origin"); !cfg.origin.allows(origin, present, first(r, "Host")) {
		return accepted{}, &refusal{status: http.StatusForbidden, why: "origin not allowed"}
	}
	a := accepted{accept: acceptKey(key), deflate: cfg.compression && acceptDeflate(r)}
	for _, p := range cfg.subprotocols {
		if hasToken(r, "Sec-WebSocket-Protocol", p) {
			a.subprotocol = p
			break
		}
	}
	return a, nil
}

// first returns the first value of the named header, or nil.
func first(r headerSource, name string) []byte {
	v, _ := firstOK(r, name)
	return v
}

// firstOK is first, and whether the header is present (its value may be
// empty).
func firstOK(r headerSource, name string) (v []byte, ok bool) {
	ok = r.values(name, func(b []byte) bool { v = b; return true })
	return v, ok
}

// hasToken reports whether any value of the named header holds token in
// its comma-separated list (ASCII case-insensitive).
func hasToken(r headerSource, name, token string) bool {
	return r.values(name, func(v []byte) bool {
		for len(v) > 0 {
			var t []byte
			t, v, _ = bytes.Cut(v, []byte{','})
			if bytes.EqualFold(bytes.TrimSpace(t), []byte(token)) {
				return true
			}
		}
		return false
	})
}

// fastRequest is httpserver's request as a handshakeRequest.
type fastRequest struct{ r *httpserver.Request }

func (f fastRequest) method() string  { return f.r.Method() }
func (f fastRequest) protoMinor() int { return f.r.ProtoMinor() }
func (f fastRequest) values(name string, fn func([]byte) bool) bool {
	for i := range f.r.NumHeaders() {
		if n, v := f.r.HeaderAt(i); bytes.EqualFold(n, []byte(name)) && fn(v) {
			return true
		}
	}
	return false
}

// UpgradeFast is Upgrade for httpserver's fast API (a Handler served by
// httpserver.NewFast, over Listen or ListenTLS), as NewFast is New's: it
// checks r is a WebSocket opening handshake (RFC 6455 §4.2.1) and answers
// 101, handing the connection to h on this loop (no goroutine; see
// httpserver.Response.Upgrade; over HTTPS, wss). A request that is not one
// is answered with 400, 403 (an Origin the policy refuses: by default any
// other host than the request's; see WithAllowedOrigins), 405 (not GET) or
// 426 (another Sec-WebSocket-Version, with "Sec-WebSocket-Version: 13"),
// and the error, matching ErrHandshake, is returned; the handler then
// simply returns. A call that cannot work whatever the request (a nil
// handler, an option UpgradeFast does not take) is answered 500 and its
// error returned: a misconfiguration shows on the first request, not as a
// 200.
//
// The request head was read by httpserver, so the server's
// Timeouts.ReadHeader (default httpserver.DefaultReadHeaderTimeout) is
// this path's handshake timeout; Timeouts.Handshake is refused here.
func UpgradeFast(w *httpserver.Response, r *httpserver.Request, h Handler, opts ...Option) error {
	cfg, err := newConfig(opts, "UpgradeFast", siteUpgrade)
	if err == nil && h == nil {
		err = errNilHandler("UpgradeFast")
	}
	if err != nil {
		w.SetStatus(http.StatusInternalServerError)
		w.AddHeader("Content-Type", "text/plain; charset=utf-8")
		_, _ = w.WriteString(misconfigured)
		return err
	}
	a, ref := check(fastRequest{r}, cfg)
	if ref != nil {
		if ref.header != "" {
			w.AddHeader(ref.header, ref.hval)
		}
		w.SetStatus(ref.status)
		w.AddHeader("Content-Type", "text/plain; charset=utf-8")
		_, _ = w.WriteString(ref.why + "\n")
		return ref
	}
	c := &Conn{h: h, cfg: cfg, subprotocol: a.subprotocol, deflate: a.deflate}
	w.AddHeader("Sec-WebSocket-Accept", a.accept)
	if a.subprotocol != "" {
		w.AddHeader("Sec-WebSocket-Protocol", a.subprotocol)
	}
	if a.deflate {
		w.AddHeader("Sec-WebSocket-Extensions", extensionAnswer)
	}
	if err := w.Upgrade("websocket", (*engineSide)(c)); err != nil { // wss too: TLS is the connection's transport
		w.SetStatus(http.StatusBadRequest)
		return fmt.Errorf("%w: %w", ErrHandshake, err)
	}
	return nil
}

// misconfigured is the body of the 500 a misconfigured upgrade call
// answers; the error returned to the handler says what is wrong.
const misconfigured = "websocket: the server's upgrade call is misconfigured\n"

func errNilHandler(caller string) error {
	return fmt.Errorf("websocket: %s needs a handler (nil)", caller)
}
