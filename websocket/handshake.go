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

// ErrHandshake matches (errors.Is) every refused upgrade request.
var ErrHandshake = errors.New("websocket: bad handshake")

func refuse(w *httpserver.Response, status int, why string) error {
	w.SetStatus(status)
	w.AddHeader("Content-Type", "text/plain; charset=utf-8")
	_, _ = w.WriteString(why + "\n")
	return fmt.Errorf("%w: %s", ErrHandshake, why)
}

// Upgrade checks r is a WebSocket opening handshake (RFC 6455 §4.2.1)
// and answers 101, handing the connection to h on this loop (no goroutine;
// see httpserver.Response.Upgrade). A request that is not one is answered
// with 400, 403 (WithOriginCheck), 405 (not GET) or 426 (another
// Sec-WebSocket-Version, with "Sec-WebSocket-Version: 13"), and the error,
// matching ErrHandshake, is returned; the handler then simply returns.
func Upgrade(w *httpserver.Response, r *httpserver.Request, h Handler, opts ...Option) error {
	cfg, err := newConfig(opts)
	if err != nil {
		return err
	}
	switch {
	case h == nil:
		return errors.New("websocket: Upgrade needs a handler")
	case r.Method() != http.MethodGet:
		w.AddHeader("Allow", "GET")
		return refuse(w, http.StatusMethodNotAllowed, "a WebSocket handshake is a GET")
	case r.ProtoMinor() < 1:
		return refuse(w, http.StatusBadRequest, "a WebSocket handshake needs HTTP/1.1")
	case !headerHasToken(r, "Upgrade", "websocket"):
		return refuse(w, http.StatusBadRequest, "Upgrade: websocket missing")
	case !headerHasToken(r, "Connection", "upgrade"):
		return refuse(w, http.StatusBadRequest, "Connection: upgrade missing")
	case string(bytes.TrimSpace(r.Header("Sec-WebSocket-Version"))) != "13":
		w.AddHeader("Sec-WebSocket-Version", "13")
		return refuse(w, http.StatusUpgradeRequired, "Sec-WebSocket-Version 13 required")
	}
	key := bytes.TrimSpace(r.Header("Sec-WebSocket-Key"))
	var raw [18]byte
	if n, err := base64.StdEncoding.Decode(raw[:], key); err != nil || n != 16 || len(key) != 24 {
		return refuse(w, http.StatusBadRequest, "Sec-WebSocket-Key is not 16 bytes in base64")
	}
	if cfg.checkOrigin != nil && !cfg.checkOrigin(r) {
		return refuse(w, http.StatusForbidden, "origin not allowed")
	}
	c := &Conn{h: h, cfg: cfg, subprotocol: selectSubprotocol(r, cfg.subprotocols)}
	w.AddHeader("Sec-WebSocket-Accept", acceptKey(key))
	if c.subprotocol != "" {
		w.AddHeader("Sec-WebSocket-Protocol", c.subprotocol)
	}
	if err := w.Upgrade("websocket", (*engineSide)(c)); err != nil {
		return refuse(w, http.StatusBadRequest, err.Error())
	}
	return nil
}

// headerHasToken reports whether any header line called name holds token in
// its comma-separated list (ASCII case-insensitive).
func headerHasToken(r *httpserver.Request, name, token string) bool {
	for i := range r.NumHeaders() {
		n, v := r.HeaderAt(i)
		if !bytes.EqualFold(n, []byte(name)) {
			continue
		}
		for len(v) > 0 {
			var t []byte
			t, v, _ = bytes.Cut(v, []byte{','})
			if bytes.EqualFold(bytes.TrimSpace(t), []byte(token)) {
				return true
			}
		}
	}
	return false
}

// selectSubprotocol returns the first of the server's subprotocols the
// client offers, or "".
func selectSubprotocol(r *httpserver.Request, ours []string) string {
	for _, p := range ours {
		if headerHasToken(r, "Sec-WebSocket-Protocol", p) {
			return p
		}
	}
	return ""
}
