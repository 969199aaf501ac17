// Package websocket serves and dials RFC 6455 WebSocket connections on
// the loop: frames are parsed and written in the connection's callbacks,
// with no goroutine per connection, so very many mostly idle connections
// cost little more than their sockets (a Conn is a few hundred bytes).
//
// Upgrade answers a handshake from an http.Handler served by httpserver's
// adapter (httpserver.New, over HTTP or HTTPS); UpgradeFast from
// httpserver's fast API (httpserver.NewFast), the names following
// httpserver's; EngineHandler reads it itself on an engine listener, plain
// or under looptls.Server. Each of them hands the connection to the
// Handler on its loop, where it stays: no goroutine per connection. Dial
// opens one as a client, served by the same Handler and Conn.
//
//	type echo struct{}
//
//	func (echo) OnOpen(c *websocket.Conn) {}
//	func (echo) OnMessage(c *websocket.Conn, kind websocket.MessageKind, p []byte) {
//		c.WriteMessage(kind, p)
//	}
//	func (echo) OnClose(c *websocket.Conn, code int, reason string, err error) {}
//
// # WebSockets beside net/http routes
//
// Upgrade is the one call an http.Handler makes to turn its request into a
// loop-native WebSocket, so one http.ServeMux, with its middleware, serves
// ordinary routes and WebSockets on one port. The handler's goroutine
// returns to the adapter's pool once the 101 is queued; over ListenTLS the
// connection keeps its TLS transport (wss):
//
//	mux := http.NewServeMux()
//	mux.Handle("/", http.FileServer(http.Dir("static")))
//	mux.HandleFunc("/ws", func(w http.ResponseWriter, r *http.Request) {
//		if err := websocket.Upgrade(w, r, echo{}, websocket.WithCompression(true)); err != nil {
//			log.Printf("ws: %v", err) // already answered: 4xx, or 500
//		}
//	})
//	srv, err := httpserver.New(mux)
//	if err != nil {
//		log.Fatal(err)
//	}
//	group, err := loopgroup.New() // a loop per core
//	if err != nil {
//		log.Fatal(err)
//	}
//	if _, err := srv.Listen(group, "tcp", ":8080"); err != nil { // or srv.ListenTLS(group, "tcp", ":8443", cert, key)
//		log.Fatal(err)
//	}
//
// Under net/http's own server (or any http.ResponseWriter that is not the
// adapter's and does not Unwrap to it) Upgrade answers 500 and returns an
// error wrapping httpserver.ErrNotAdapter: the connection is on no loop,
// and it does not hijack it into a goroutine behind the caller's back.
//
// UpgradeFast is the same call for a handler of the fast API, on the loop:
//
//	func serve(w *httpserver.Response, r *httpserver.Request) {
//		if err := websocket.UpgradeFast(w, r, echo{}); err != nil {
//			return // it answered 400, 403, 405 or 426 (500 when misconfigured)
//		}
//	}
//
// # Origin
//
// Browsers attach cookies and HTTP authentication to a WebSocket handshake
// whatever page opens it, and the same-origin policy does not cover
// WebSocket, so a server that accepts any Origin can be driven by any web
// page its users visit (cross-site WebSocket hijacking). Every upgrade path
// therefore refuses with 403, by default, a handshake whose Origin header
// is present and names another host[:port] than the request's Host (ASCII
// case-insensitive, as gorilla/websocket and coder/websocket compare them;
// "null", the origin of sandboxed iframes, is refused). A handshake
// without Origin is accepted: browsers always send one, so it comes from a
// program, which a web page cannot make a victim's browser be.
// WithAllowedOrigins names further origins to accept (a front end served
// from another host), or "*" for all, for endpoints that authenticate by
// other means than what a browser attaches (coder/websocket spells it the
// same way); WithOriginCheck decides with a function of its own:
//
//	websocket.Upgrade(w, r, h, websocket.WithAllowedOrigins("https://app.example", "localhost:3000"))
//
// # Timeouts
//
// WithTimeouts sets a connection's three bounds in one struct, as
// engine.WithTimeouts and httpserver.WithTimeouts do, a zero field keeping
// the default: Handshake (10 s), Close (the wait for the peer's close
// frame, 5 s) and Ping (keepalive pings, off). A connection closed for
// passing one reports an error matching ErrTimeout, which says which.
//
// A client that connects and sends nothing, or trickles its request, is
// cut on every path: EngineHandler closes a connection whose request head
// is not whole within Timeouts.Handshake (default 10 s, httpserver's
// DefaultReadHeaderTimeout), counted from its opening (over TLS: from its
// TLS handshake's end). Under looptls.Server the TLS handshake is bounded
// first by looptls's own WithHandshakeTimeout (10 s by default too), and
// then the request head, as net/http bounds both by ReadHeaderTimeout:
//
//	h, err := websocket.EngineHandler(chat, websocket.WithTimeouts(websocket.Timeouts{Handshake: 5 * time.Second}))
//	if err != nil {
//		log.Fatal(err)
//	}
//	ln, err := engine.Listen(loop, "tcp", ":8443",
//		looptls.Server(h, tlsConfig, looptls.WithHandshakeTimeout(5*time.Second)))
//
// Behind Upgrade and UpgradeFast the HTTP server reads the request head,
// under its Timeouts.ReadHeader (and its ListenTLS bounds the TLS
// handshake by it), so they refuse Timeouts.Handshake.
//
// # Options
//
// Options are checked by the call they are given to: an option for
// another kind of call (WithDialConfig, Dial's, given to a server; an
// origin option given to Dial) is an error naming it, returned at
// construction by EngineHandler and Dial. Upgrade and UpgradeFast, called
// per request, return it and answer 500, so the mistake shows on the first
// request and never as a 200. The options every side takes are one each
// (WithSubprotocols, WithCompression, WithMaxMessageSize, WithSlowConsumer,
// WithTimeouts); the server's are the origin policy's two, and the
// client's own settings (request header fields, the TLS configuration of
// wss://, the engine connection's options) are one struct, DialConfig, as
// they only ever go together into Dial.
//
// A message that arrived whole in one read is handed to OnMessage in place,
// not copied; a fragmented one, or one that spans reads, is assembled in a
// buffer bounded by WithMaxMessageSize (1009 past it). Text is checked to be
// UTF-8 as it arrives (1007). Pings are answered, the close handshake is
// completed (Timeouts.Close when the peer does not answer), optional
// keepalive pings find dead peers (Timeouts.Ping), and a peer that breaks
// the protocol is closed with the code RFC 6455 asks for (1002).
//
// When the loop shuts down, each connection sends a close frame with 1001
// (going away), after whatever a ShutdownHandler's OnShutdown sends, and
// closes once it is flushed; OnClose reports CloseGoingAway and
// engine.ErrShutdown.
//
// Backpressure: WriteMessage on the loop never refuses for size; past the engine's
// high watermark the connection by default stops reading the peer until its
// output drains (PauseReading), or is dropped (CloseSlow, for fan-out).
// AsyncWriteMessage from other goroutines is bounded by the engine's async
// write limit.
//
// Compression: WithCompression accepts permessage-deflate (RFC 7692), which
// browsers, gorilla (EnableCompression) and coder/websocket offer. The
// server answers server_no_context_takeover and client_no_context_takeover
// (the RFC lets it impose both), so every message is a deflate stream of
// its own and the compressor and decompressor come from pools shared by
// all connections: an idle connection holds no compression state. Taking
// over the contexts would compress streams of similar small messages
// better, at about 40 KB per connection to inflate and several hundred to
// deflate. compress/flate deflates with a 32 KB window only, so an offer
// that limits the server's window (server_max_window_bits below 15) is
// declined. A compressed message is inflated at most to WithMaxMessageSize
// (1009 past it: a compression bomb costs no more than the limit); data
// that does not inflate is 1007. Messages under 64 bytes are sent
// uncompressed.
//
// # wss
//
// WebSocket over TLS runs on package looptls, the engine connection's
// transport: crypto/tls's records are decrypted and encrypted on the
// connection's loop, and the frames are read and written exactly as for
// ws (the same code, the same *engine.Conn), so a wss connection costs no
// goroutine either once its TLS handshake (on one of the loop's kept
// goroutines) is done. Upgrade and UpgradeFast over httpserver's ListenTLS
// hand the connection over as over ListenTLS's plain sibling;
// EngineHandler serves a looptls listener:
//
//	wh, err := websocket.EngineHandler(h)
//	ln, err := engine.Listen(loop, "tcp", ":8443", looptls.Server(wh, tlsConfig))
//
// looptls.State(c.Conn()) gives the TLS state (peer certificates, ALPN,
// SNI). The watermarks and the slow-consumer policy count what waits for
// the socket. Every close sends close_notify after the close frame (a
// failed connection's too; not CloseSlow's drop, which aborts), and the
// loop's shutdown after its 1001. What a connection writes in one loop
// iteration (a frame's header and payload, several frames) is encrypted
// together, so a small frame is one record, not two; the only
// steady-state allocations are crypto/tls's own
// (BenchmarkDialEchoTLS128). A broadcast (Hub) is encrypted per wss
// member.
//
// # Client
//
// Dial opens a connection to a ws:// or wss:// URL from a loop (or a
// group's next one), for tests, proxies and bots, and serves it with the
// same Handler and Conn as a server's:
//
//	c, err := websocket.Dial(ctx, loop, "ws://127.0.0.1:8080/chat", h,
//		websocket.WithSubprotocols("chat.v1"), websocket.WithCompression(true))
//
// Dial blocks, so it refuses to run on the loop it would use; DialAsync is
// the same dial as a future, for a handler on that loop (a proxy opening
// its upstream): a listener on the future runs on the loop once the
// connection is open or the dial failed.
//
// For wss:// it runs looptls's client side: DialConfig.TLSConfig sets the
// configuration (root CAs, client certificates; the system's roots by
// default), its ServerName the URL's host unless set, and the TLS
// handshake is bounded by Timeouts.Handshake as the answer is; a failed
// one wraps looptls.ErrHandshake and crypto/tls's error:
//
//	c, err := websocket.Dial(ctx, group, "wss://example.com/feed", h,
//		websocket.WithDialConfig(websocket.DialConfig{TLSConfig: tlsConfig, Header: authHeader}))
//
// The handshake sends a random 16-byte Sec-WebSocket-Key and checks the
// answer: 101, Upgrade and Connection, Sec-WebSocket-Accept, a subprotocol
// only among those offered, permessage-deflate only if offered (and with
// server_no_context_takeover, which the client asks for: it inflates each
// message on its own, as the server does); any other extension fails it.
// The answer's head is bounded (16 KiB) and so is its wait
// (Timeouts.Handshake, and ctx). A refusal is a *HandshakeError naming
// the status; connect errors are engine.Dial's *net.OpError. Bytes the
// server sends right behind its 101 are the connection's first frames.
// Every frame the client sends is masked with a fresh key from
// math/rand/v2's ChaCha8 source (no lock, no allocation), copied through a
// small stack buffer so the caller's bytes are left as they are; a masked
// frame from the server fails the connection with 1002.
//
// Broadcast: a Hub (its zero value is ready to use, its limits are
// fields) holds connections on any loops of a group, kept per loop. Add (in OnOpen) and Remove run on the connection's loop, and a
// connection leaves by itself when it closes. Broadcast, from any goroutine
// or loop, encodes the frame once (and deflates it once, shared by the
// members that negotiated compression) and hands one task to each loop
// holding members, which copies it into each member's output: the cost off
// the loops does not grow with the members, and the hub allocates nothing
// per broadcast in steady state (a client member, from Dial, gets a frame
// of its own, masked). Every member that keeps reading sees every
// broadcast, in one order: the hub pushes back instead of dropping. While a
// member is over its high watermark (within the hub's slow-consumer timeout,
// Hub.SlowTimeout, default 5 s) or a loop's queue is past its backlog
// (Hub.BacklogMessages and BacklogBytes, default 1024 messages or 1 MiB),
// a Broadcast from a
// member's OnMessage is accepted and that member's reads are paused until
// the congestion clears, and a Broadcast from elsewhere returns
// ErrHubBacklog (BroadcastContext waits instead). A member that stays over
// its watermark for the timeout is handled by its policy: CloseSlow drops
// it, PauseReading skips it (Hub.Stats counts what it missed) until it
// drains. Hub.Stats counts pauses, refusals and slow members too. Once the loops
// have shut down Broadcast returns engine.ErrShutdown.
//
// # Fragmented messages
//
// WriteMessage sends a message as one frame. NextWriter, on the loop, opens
// a message sent in fragments, for one whose size is not known in advance
// or too large to hold whole: each Write of its MessageWriter is a frame,
// Close sends the final one.
//
//	w, err := c.NextWriter(websocket.Text)
//	...
//	err = json.NewEncoder(w).Encode(v) // a frame per Write
//	err = w.Close()
//
// No data frame may come between a message's fragments (RFC 6455 §5.4):
// while it is open WriteMessage on the loop returns ErrMessageOpen, and the
// frames of AsyncWriteMessage and of Hub broadcasts wait, held by the
// transport within the async write limit (engine.Conn.HoldAsync), until its
// Close; pings, pongs and the close frame may come between fragments. Text
// is checked as it is written (a fragment may split a code point; the
// message as a whole must be UTF-8). With permessage-deflate every
// fragmented message is compressed: RSV1 on its first frame, its payloads
// one deflate stream, flushed at each Write. A close of the connection
// while a message is open (Close, a failure, the loop's shutdown) ends it
// unfinished, and the frames held behind it are dropped. MessageWriter's
// doc has the details.
//
// Not supported yet: other extensions, so every other RSV bit is refused;
// sending fragments from another goroutine (NextWriter is for the loop).
package websocket
