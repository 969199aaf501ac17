package websocket

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/ringloop/ringloop/httpserver"
)

// Upgrade is the one call an http.Handler served by httpserver's adapter
// (httpserver.New, over Listen or ListenTLS) makes to turn its request into
// a loop-native WebSocket: it checks the opening handshake (RFC 6455
// §4.2.1, the Origin policy included), answers 101, and moves the
// connection onto its loop with h, where it is served with no goroutine;
// the handler then returns and its goroutine goes back to the pool. So one
// http.ServeMux serves ordinary routes and WebSockets on one port:
//
//	mux := http.NewServeMux()
//	mux.HandleFunc("/", index)
//	mux.HandleFunc("/ws", func(w http.ResponseWriter, r *http.Request) {
//		if err := websocket.Upgrade(w, r, echo{}); err != nil {
//			log.Print(err) // answered already: 4xx, or 500 when misconfigured
//		}
//	})
//	srv, err := httpserver.New(mux)
//	_, err = srv.Listen(loops, "tcp", ":8080") // or ListenTLS: wss stays on looptls
//
// Over HTTPS (r.TLS set) the TLS connection is handed over, its records
// staying on the loop (wss). A request that is not a handshake is answered
// 400, 403 (an Origin the policy refuses: by default any other host than
// the request's; see WithAllowedOrigins), 405 (not GET) or 426 (another
// Sec-WebSocket-Version, with "Sec-WebSocket-Version: 13"), and the error,
// matching ErrHandshake, returned. A call that cannot work whatever the
// request is answered 500 and its error returned: a nil handler, an option
// it does not take, and a w that is not the adapter's (an error wrapping
// httpserver.ErrNotAdapter: net/http's own server, say, whose connections
// are on no loop; use a goroutine-per-connection library over Hijack
// there). w may wrap the adapter's writer if it has an Unwrap method
// (http.ResponseController's convention), and must not have been written
// to. The request head was read by the HTTP server, so its
// Timeouts.ReadHeader is this path's handshake timeout; Timeouts.Handshake
// is refused here.
func Upgrade(w http.ResponseWriter, r *http.Request, h Handler, opts ...Option) error {
	cfg, err := newConfig(opts, "Upgrade", siteUpgrade)
	if err == nil && h == nil {
		err = errNilHandler("Upgrade")
	}
	if err == nil {
		if e := httpserver.CanUpgrade(w); errors.Is(e, httpserver.ErrNotAdapter) {
			err = fmt.Errorf("websocket: Upgrade needs a handler served by httpserver's adapter (httpserver.New), which has the connection on a loop: %w", e)
		} else if e != nil {
			return fmt.Errorf("%w: %w", ErrHandshake, e) // written to, hijacked, gone: no answer can be given
		}
	}
	if err != nil {
		http.Error(w, misconfigured[:len(misconfigured)-1], http.StatusInternalServerError)
		return err
	}
	a, ref := check(stdRequest{r}, cfg)
	if ref != nil {
		hdr := w.Header()
		if ref.header != "" {
			hdr.Set(ref.header, ref.hval)
		}
		http.Error(w, ref.why, ref.status)
		return ref
	}
	c := &Conn{h: h, cfg: cfg, subprotocol: a.subprotocol, deflate: a.deflate}
	hdr := w.Header()
	hdr.Set("Sec-WebSocket-Accept", a.accept)
	if a.subprotocol != "" {
		hdr.Set("Sec-WebSocket-Protocol", a.subprotocol)
	}
	if a.deflate {
		hdr.Set("Sec-WebSocket-Extensions", extensionAnswer)
	}
	if err := httpserver.Upgrade(w, "websocket", (*engineSide)(c)); err != nil { // wss too: TLS is the connection's transport
		// Not handed over (a body still arriving, the connection gone):
		// the handler's return must not answer 200 with an accept key.
		hdr.Del("Sec-WebSocket-Accept")
		hdr.Del("Sec-WebSocket-Protocol")
		hdr.Del("Sec-WebSocket-Extensions")
		http.Error(w, "websocket: upgrade failed", http.StatusBadRequest)
		return fmt.Errorf("%w: %w", ErrHandshake, err)
	}
	return nil
}
