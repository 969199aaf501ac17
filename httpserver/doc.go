// Package httpserver is an HTTP/1.1 and HTTP/2 server on ringloop's event
// loops.
//
// New (any http.Handler, as net/http) or NewFast (the fast API, a handler
// on the loop) builds a Server; Listen serves it on one *engine.Loop or a
// *loopgroup.Group, with any of loopgroup's reactor models (main/sub with
// loopgroup.WithBoss, single, loopgroup.WithListenerPerLoop); Shutdown(ctx)
// and Close end it as net/http's do; ListenTLS serves HTTPS (see TLS below),
// with HTTP/2 by ALPN, and WithH2C cleartext HTTP/2 (see HTTP/2).
// Socket and connection options are engine.ConnOption values, given
// through loopgroup.WithConnOptions.
//
// # Parsing
//
// Requests are parsed incrementally from OnData: a request may arrive in any
// number of pieces (each call resumes where the last stopped) and many may
// arrive in one read (served in order; their responses leave in one send per
// loop iteration). When a request arrives whole in one read it is parsed and
// served in place, without a copy. Supported: Content-Length and chunked
// bodies (with trailers; decoded in place), Expect: 100-continue,
// keep-alive (HTTP/1.1 by default, HTTP/1.0 with Connection: keep-alive),
// Connection: close, pipelining, HEAD, absolute-form targets (Host taken from
// the target, as net/http) and OPTIONS *. Up to two empty lines before a
// request line are skipped (RFC 9112 section 2.2: a client's stray CRLF
// after a body).
//
// Line endings follow RFC 9112 and net/http: the request line and header
// lines end in CRLF or a bare LF; every line of a chunked body (sizes,
// extensions, trailers) ends in CRLF; a CR anywhere else is refused (400
// and close) — a bare CR is where parsers disagree on where a line ends,
// the root of request smuggling.
//
// # Request bodies
//
// A body is either whole or streamed. Whole (the fast API, the adapter's
// inline mode): read before the handler runs, up to the body limit, so a
// handler on the loop never blocks on a slow upload and a malformed body is
// refused before any handler sees it. Streamed (the adapter on goroutines,
// as net/http; a fast handler that is a BodyStreamer, for the requests it
// chooses): the handler runs once the head is read and reads the body
// while it arrives (Request.Body, Request.BodyStream, both a *Body). The
// loop decodes the body into a 64 KiB window and stops reading the
// connection while the window is full, reading on once the reader took half
// of it: an upload of any length costs one window and one read of memory
// (TestStreamedUpload: 1 GiB within 16 MiB of resident growth), and a
// handler that never reads cannot make the server hold more. "Expect:
// 100-continue" is answered when the handler first reads, as net/http does;
// a handler that answers without reading sends no 100 and the connection
// closes after its answer. A body the handler left unread is read and
// dropped after the response if at most 256 KiB of it remain (the
// connection then serves its next request), else the connection closes.
// A streamed body's framing error, a client that leaves mid-body
// (io.ErrUnexpectedEOF) or one silent for the read timeout
// (os.ErrDeadlineExceeded) end Read in an error, and the connection closes
// after the handler's answer. Limits.StreamedBody (no default, as net/http)
// bounds a streamed body: 413 for a larger Content-Length, *http.MaxBytesError
// from Read for a chunked body growing past it. Hijack and Upgrade are
// refused while a body is still arriving.
//
// # Safety
//
// Limits (WithLimits): request line and headers 1 MiB (431;
// http.DefaultMaxHeaderBytes), 1000 header lines (431), request line 64 KiB (414),
// whole body 8 MiB (413), streamed body unbounded. Malformed requests get 400 and the connection closes;
// an unsupported HTTP version gets 505, an unknown transfer coding 501, an
// Expect other than 100-continue 417 — in net/http's format. A chunked
// body's framing may exceed its data by 16 bytes a chunk plus twice the
// data plus 16 KiB, as in net/http (400 past it). Smuggling
// defences: Content-Length together with Transfer-Encoding, repeated or
// invalid Content-Length, Transfer-Encoding on HTTP/1.0, repeated or unknown
// transfer codings, obs-fold, white space before a colon, control bytes and
// a CR outside a line ending are refused and the connection closed: no byte of a refused request is
// ever parsed as a second request. After a refusal the server half-closes
// and drops input for up to half a second, so the client can read the answer
// before the connection goes.
//
// Timeouts (WithTimeouts; defaults 10 s for the headers from their first
// byte, 60 s for the whole request (for a streamed body: between its
// bytes, so an upload's length is not bounded by time), 120 s idle between
// requests, 60 s for a client reading nothing of its output, and no write
// timeout, as net/http) run on the
// loop's timer: one tick per loop, a quarter of the shortest timeout (at most
// half a second), which also refreshes the loop's cached Date line. They never
// fire before they have elapsed and fire up to one tick after. A slowloris
// client is cut off by the header timeout however steadily it trickles.
//
// A client that stops reading its responses is bounded by the connection's
// write watermarks (engine.BufferLimits): once its output passes the high
// watermark the server stops serving it and pauses reading (after at most 64
// KiB of pipelined input), and goes on when the output drains under the low
// one. An adapter handler's Flush waits for that drain. It is bounded in
// time too: a connection whose output stays over the high watermark for
// Timeouts.WriteStall (default 60 s) is reset, and so is one whose
// response is not written by Timeouts.Write (net/http's WriteTimeout:
// from the end of the request's headers to the response's last byte
// handed to the kernel; no default). Either way whoever writes the
// response is freed at once, up to one tick after the deadline: an adapter
// handler's context is cancelled and its Write and Flush fail, a
// Deferred's Flush and Finish fail, all with an error wrapping
// os.ErrDeadlineExceeded that says which timeout it was (net/http would
// fail only the handler's next write). Why WriteStall has a default and
// Write has none: a total bound cuts long downloads and event streams a
// service ported from net/http expects to run, while a client that reads
// nothing for a minute holds a handler, a connection and up to a high
// watermark of memory for nothing.
//
// # Two APIs
//
// The fast API (NewFast, Handler): the handler runs on the loop with a Request
// view (slices into the receive buffer, valid during the call) and a
// Response that buffers status, headers and body; the server adds Date,
// Content-Length (or, after Response.Flush, chunked framing) and
// Connection. One Response per loop is reused: a request costs no
// allocation (BenchmarkServer: 0 allocs/op). A handler that blocks stalls
// its loop: for blocking work it calls Response.Defer, hands the returned
// Deferred to a goroutine or loopgroup's executor, returns, and the
// Deferred is finished there (Finish; Flush streams, waiting while the
// client is slower); the connection serves nothing else
// meanwhile and its pipelined responses stay in order. (Writing a response
// with Conn.AsyncWrite instead does not work: the server answers the
// request itself when the handler returns.) Or use the adapter.
//
// The adapter (New) serves any http.Handler with an *http.Request built
// as net/http builds it (Body streaming the request body, Context cancelled
// when the client goes away or the server closes the connection, Trailer, RemoteAddr,
// http.LocalAddrContextKey) and a ResponseWriter that is also an
// http.Flusher. When the connection ends under a running handler,
// context.Cause(r.Context()) says why, as OnClose's cause does for an
// engine.Handler: errors.Is(cause, engine.ErrShutdown) once the loop shut
// down. (On the fast API, Deferred.Finish and Flush return ErrShutdown
// then.) Where it runs:
//
//   - default: each request on a goroutine of its own, as on net/http; the
//     response goes back to the loop as one task when the handler returns
//     (or per Flush, the handler waiting while the client is slower). A
//     blocking handler blocks only itself. The goroutines are workers kept
//     between requests (each loop's, idle ones released after a second
//     and at the loop's shutdown): a goroutine started per request grows
//     its stack, copying it, on its way to the handler every time (package
//     internal/workers says why reuse pays). Like net/http's per-connection goroutine,
//     a worker runs requests one after another, so goroutine-local state a
//     handler leaves (pprof labels set without pprof.Do) is seen by later
//     requests.
//   - WithInlineHTTP: on the loop, like the fast API. It saves the goroutine
//     and the hand-off but a blocking handler stalls the loop, and Flush
//     cannot wait for a slow client (its output is bounded only once the
//     handler returns).
//
// Allocations: a request costs the adapter its *http.Request (built on the
// stack, one copy made by WithContext), the header map, one string holding
// the whole head (the target, names and values are substrings of it), the
// request's state (which holds a plain target's URL, the response's first
// 512 bytes of body and 256 of header lines, the sync.WaitGroup a
// streaming handler waits on, and the request's context). The context makes the context
// package's cancel context (two allocations more) only when a handler
// waits on it, reads a value from it or derives one; Err and Deadline do
// not need it. A sniffed Content-Type goes on the wire rather than into
// the handler's map. Nothing is pooled: no object a handler can still
// reach after it returns is reused (BenchmarkServer: 7 allocations for a
// hello-world handler that itself makes 3, on a worker as inline, against
// net/http's 18).
//
// The bench harness (make bench-compare) measures both modes against
// net/http (bench/results/latest.md). Inline pays most when
// requests are pipelined (one goroutine hand-off and one task per request
// saved); it is not the default because it breaks net/http's contract that
// a handler may block. Use it for handlers that never block.
//
// # Upgrades, hijacking and net/http's hooks
//
// The adapter's ResponseWriter is an http.Hijacker (so gorilla/websocket,
// x/net/websocket and CONNECT proxies work, and
// http.NewResponseController(w).Hijack): the connection becomes a net.Conn
// of package netconn on the same loop, holding the bytes the client sent
// behind the request. Hijack needs the handler on its own goroutine: with
// WithInlineHTTP it returns an error. The fast API's Response.Upgrade
// answers 101 Switching Protocols and hands the connection to an
// engine.Handler on the same loop, with no goroutine at all (the websocket
// package builds on it), over TLS as over TCP. An http.Handler does the
// same with Upgrade(w, protocol, h): a 101 carrying w.Header()'s fields,
// then the connection handed to a loop handler with the bytes behind the
// request, reported as StateHijacked, while the handler's goroutine
// returns (the websocket package's Upgrade builds on it); a writer that
// is not the adapter's (net/http's own) gets ErrNotAdapter, and CanUpgrade
// asks first.
// Either way the server no longer counts the connection (Shutdown does not
// wait for it; the loop's shutdown closes it).
// http.ResponseController's SetWriteDeadline and SetReadDeadline work per
// request, as on net/http: SetWriteDeadline replaces Timeouts.Write for
// this response, SetReadDeadline bounds the arrival of a streamed body
// (its Read then fails with an error wrapping os.ErrDeadlineExceeded, the
// handler still answers and the connection closes after the answer; on a
// body already read whole it has nothing to bound), the zero time clears
// either (Timeouts.Read's bound on the body too), and the next request
// starts from the server's timeouts again. They are checked on the loop's
// tick: up to half a second late. EnableFullDuplex returns
// http.ErrNotSupported.
//
// net/http's server hooks have their counterparts: WithLogger (ErrorLog),
// WithConnState (ConnState, with an *engine.Conn), WithBaseContext
// (BaseContext, given the context), WithConnContext (ConnContext) and
// Server.RegisterOnShutdown. No Server header is sent, as net/http sends
// none: a handler that wants one sets it.
//
// # Metrics
//
// Server.Metrics returns a snapshot of the server's counters, as
// engine.Loop.Metrics does of a loop's, cheap from any goroutine: open
// connections, responses by status class, hijacked requests and a
// histogram of the handlers' time, counted on every request without
// allocating. Package github.com/ringloop/ringloop/metrics (a module of
// its own) exports them to Prometheus.
//
// # TLS
//
// ListenTLS(loops, network, addr, certFile, keyFile) serves HTTPS on either
// API, inline mode included, as net/http's ListenAndServeTLS: the files
// hold a PEM certificate (chain) and key, and may be empty when the
// configuration given with WithTLSConfig has Certificates or
// GetCertificate. The configuration is an option, not a field as
// net/http's Server.TLSConfig, because every setting of a Server here is
// an option; it means the same: ListenTLS serves a clone of it, so one
// *tls.Config (with SNI's GetCertificate, client certificates, session
// tickets) can serve several servers. Listen ignores it, as net/http's
// ListenAndServe does.
//
// crypto/tls itself runs on the loops (package looptls): records are
// decrypted and encrypted on the connection's loop, and an established
// connection costs no goroutine; each handshake runs on one of the loop's
// kept goroutines (package internal/workers), bounded by the read-header
// timeout (or the read timeout, as net/http bounds it). ALPN offers "h2"
// and then "http/1.1", as net/http does, before the configuration's other
// NextProtos; a configuration whose NextProtos names "http/1.1" and not
// "h2" keeps HTTP/2 off. A connection that
// negotiates another protocol listed there (ACME's "acme-tls/1") is closed
// after its handshake, as net/http does. A plain HTTP client on the TLS
// port gets net/http's 400 ("Client sent an HTTP request to an HTTPS
// server."), then the close. A failed handshake (that one among them) is
// logged at warning level through WithLogger's logger.
//
// The adapter's *http.Request carries r.TLS as net/http's (one
// ConnectionState per connection, shared by its requests; ServerName from
// SNI, NegotiatedProtocol "http/1.1" or "h2", PeerCertificates); r.URL has no
// scheme and r.Host comes from the request, as in net/http. The fast API
// has Request.TLS. The watermarks and Response.Flush's waits count what
// waits for the socket, plaintext to encrypt and ciphertext. WithConnState
// and WithConnContext get the connection, from the end of the handshake
// (net/http reports StateNew at accept); looptls.State reads its TLS
// state. Hijack works over TLS: its net.Conn reads and writes plaintext,
// the records staying on the loop (gorilla/websocket serves wss through
// it; net/http would return its *tls.Conn). Upgrade hands a TLS
// connection over as a plain one: the new handler reads and writes
// plaintext (package websocket serves wss so). A client that ends its
// sending (close_notify, or a FIN) after pipelined requests gets every
// answer before the connection closes, as over TCP
// (TestHTTPSPipelinedThenClose).
//
// # HTTP/2
//
// Both APIs serve HTTP/2 (RFC 9113): over TLS where ALPN chose "h2", and in
// clear with prior knowledge when WithH2C asks for it (a connection whose
// first bytes are the client preface; any other on the port is HTTP/1.1).
// WithH2C is off by default, as net/http's unencrypted HTTP/2. The
// "Upgrade: h2c" of RFC 7540, which RFC 9113 deprecates, is not offered;
// nor is server push. Frames and HPACK are golang.org/x/net/http2's Framer
// and hpack; the connection's state machine, its streams, flow control and
// the turns its streams take run on the connection's loop, with no
// goroutine per connection. A loop's connections share one Framer (its
// buffers), and one idle for a tick lets go of its HPACK encoder and
// stream map: an idle connection keeps its HPACK decoder (the client's
// encoder refers to its table) and little else (TestH2IdleHeap). HTTP/2
// over TLS 1.2 with a cipher suite RFC 9113 prohibits (anything but an
// ephemeral key exchange with an AEAD, which a configuration may allow for
// HTTP/1.1 clients) gets GOAWAY INADEQUATE_SECURITY, as from net/http.
//
// A stream is served as an HTTP/1.1 request is. The fast API's handler runs
// on the loop with the same Request (Proto "HTTP/2.0", the :authority as
// Host and as a "host" header line, header names in lower case as sent,
// cookie lines joined) and Response: Flush sends what is written as DATA,
// Defer holds back that stream only, "Connection: close" means nothing to a stream and
// Upgrade is refused. The adapter runs each stream's handler on a kept
// goroutine (or inline) with an *http.Request as net/http's HTTP/2 server
// builds it (ProtoMajor 2, Body streamed as it arrives, Trailer filled at
// its end) and the same ResponseWriter, whose trailers (declared in the
// Trailer header or prefixed with http.TrailerPrefix) end the stream, as
// gRPC needs; Hijack returns an error wrapping http.ErrNotSupported and
// EnableFullDuplex nil, as net/http's. A handler's panic resets its stream
// (RST_STREAM INTERNAL_ERROR), not the connection.
//
// Flow control: a connection may hold 1 MiB of request bodies no handler
// has read, a stream half of it; a streamed body's window goes back to the
// client as its reader takes bytes (WINDOW_UPDATE once a quarter of the
// window has gathered), so an upload keeps flowing while a handler that
// does not read holds back its stream only. Bodies held whole (fast API,
// inline adapter) count against Limits.Body each and twice that a
// connection. Responses leave as the client's windows and the connection's
// output allow, the waiting streams taking turns a frame each: an adapter
// handler's Flush hands its data over and goes on, and its next Write or
// Flush that hands some over waits for the last to have left (one chunk
// behind, so a handler that flushes and ends does not wait in between);
// what a fast handler writes is copied.
//
// Limits.Streams (250, as net/http) is SETTINGS_MAX_CONCURRENT_STREAMS;
// a stream the client reset while its handler runs counts until the
// handler returns. Limits.HeaderBytes is SETTINGS_MAX_HEADER_LIST_SIZE (431
// past it) and bounds a header block's encoded size across CONTINUATION
// frames (plus 4 KiB); Limits.Headers, Body and StreamedBody hold per
// stream. Timeouts.ReadHeader bounds the client's first SETTINGS and every
// header block; Read a stream's request (held whole: from its HEADERS;
// streamed: between DATA frames, while the client has window); Write a
// stream's response (past it the stream is reset with CANCEL); Idle a
// connection without streams (GOAWAY, then the close); WriteStall a
// response the client's windows or its reading hold back (less than 32
// KiB taken in that time ends the connection: net/http never closes one
// whose client keeps a zero window). Shutdown sends GOAWAY naming the last
// stream served, lets those finish, then closes the connection.
//
// The published attacks each meet a bound (h2attack_test.go reproduces
// their traffic): rapid reset (CVE-2023-44487) the streams bound above and
// a bound on resets; CONTINUATION floods the header block's size; HPACK
// bombs the header limit (the rest of the block is decoded without making
// fields) and a dynamic table of 4 KiB both ways, whatever the client
// offers; floods of SETTINGS, PING, WINDOW_UPDATE, empty DATA or
// CONTINUATION frames, PRIORITY and unknown frames a count per second (100
// SETTINGS, 1000 PINGs or WINDOW_UPDATEs plus one for each KiB of DATA
// sent, 100 empty frames, 1000 of the others, twice Limits.Streams
// resets): past one, GOAWAY ENHANCE_YOUR_CALM and the close. A client that
// reads none of the ACKs it asks for stops being read once the
// connection's output is over its high watermark.
//
// # Differences from net/http
//
// The conformance test sends one table of raw requests to net/http and to
// this server (fast API, adapter, adapter inline) with the same service and
// compares status, headers (but Date and Server) and bodies. They agree
// except on these, on purpose:
//
//   - obs-fold (a header line starting with white space): 400 and close;
//     net/http joins the lines. RFC 9112 allows either; refusing removes a
//     parsing ambiguity between servers.
//   - Content-Length with Transfer-Encoding: 400 and close; net/http drops
//     the Content-Length and reads chunked. RFC 9112 says such a message
//     "ought to be handled as an error": it is the classic smuggling shape.
//   - The same Content-Length twice: 400; net/http accepts identical
//     repeats.
//   - Transfer-Encoding on HTTP/1.0: 400; net/http ignores it and frames by
//     Content-Length, which a proxy in front may not.
//   - A malformed chunked body (bad size, missing CRLF, bare LF, a bare CR
//     in a chunk line, white space before a chunk extension, a chunk size
//     of more than 16 digits) held whole: the server's 400 and close; under
//     net/http, and for a streamed body, the handler's Body.Read fails and
//     the handler answers (400 from the echo handler of the test).
//   - A trailer line ending in a bare LF: 400 and close; net/http accepts
//     it when a CRLF CRLF follows somewhere in its read buffer (and waits
//     for one otherwise).
//   - Empty lines (CRLF or LF, at most two) before any request line are
//     skipped; net/http skips up to four CR or LF bytes, bare CRs included,
//     and only after a POST. A bare CR there is refused.
//   - A request-target other than origin-form ("/path"), absolute-form
//     with an authority ("scheme://host/path"), "*" and, for CONNECT,
//     authority-form: 400; net/http accepts any URI, "a:b" too. So is an
//     absolute-form authority with userinfo, a %-escape or a byte a Host
//     header may not have.
//   - A request line over the request-line limit: 414; net/http has only the
//     header limit (431).
//   - More header lines than the header-line limit: 431 and close; net/http
//     limits only the header bytes.
//   - A whole body over the body limit: 413; net/http has no default limit
//     (it streams bodies, as the adapter on goroutines does).
//   - 100 Continue for a whole body is sent as soon as the head is read (the
//     handler runs only once the body is there); net/http, and a streamed
//     body, send it when the handler first reads the body.
//   - An unknown transfer coding is 501, as net/http and RFC 9112 (501 Not
//     Implemented), not 400.
//   - The fast API passes OPTIONS * to its handler; the adapter answers it
//     as net/http does (200, Content-Length: 0).
//   - The fast API sends exactly the headers its handler adds (no
//     Content-Type sniffing); the adapter sniffs like net/http.
//   - Date is formatted once per second per loop.
//   - The adapter drops informational (1xx) WriteHeader calls; net/http
//     sends them.
package httpserver
