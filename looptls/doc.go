// Package looptls runs TLS on engine connections with Go's own crypto/tls,
// its records driven by the loop, as the connection's transport
// (engine.Transport): a handler is an ordinary engine.Handler, receives
// plaintext in OnData and writes plaintext with Write, on the loop, and an
// established connection costs no goroutine.
//
//	cfg := &tls.Config{Certificates: []tls.Certificate{cert}, NextProtos: []string{"http/1.1"}}
//	ln, err := engine.Listen(loop, "tcp", ":8443", looptls.Server(h, cfg))
//
// h's OnOpen follows the handshake; State(c) then tells its outcome
// (ALPN's NegotiatedProtocol, SNI's ServerName, PeerCertificates,
// DidResume). Everything else is engine.Conn's, one level up: Keep and
// Reading work on plaintext, PauseRead leaves records encrypted until
// ResumeRead, AsyncWrite's bytes are encrypted on the loop, SetHandler
// hands an established connection over with its plaintext (a protocol
// upgrade: httpserver's Upgrade, websocket's wss, netconn.Hijack), and the
// optional handler interfaces apply. Client is the same for engine.Dial:
//
//	engine.Dial(ctx, loop, "tcp", "example.com:443", looptls.Client(h, &tls.Config{ServerName: "example.com"}))
//
// Everything of tls.Config works as with crypto/tls, since crypto/tls runs
// it: certificates, GetCertificate and GetConfigForClient (called on the
// handshake goroutine), client certificates, session tickets and
// resumption. A connection whose handshake fails reaches neither OnOpen
// nor OnClose; a HandshakeErrorHandler learns why, and can answer a peer
// that spoke the plain protocol to the TLS port (httpserver answers HTTP
// with a 400, as net/http does).
//
// # How the records reach crypto/tls
//
// Each connection's tls.Conn runs over an in-memory net.Conn, a pipe: its
// Read returns the ciphertext the loop received, its Write queues
// ciphertext on the engine connection below the transport (so watermarks
// and backpressure count what reaches the socket). Once the connection is
// established, the pipe follows the record boundaries (each record's
// 5-byte header gives its length) and hands crypto/tls whole records only:
// a record's start waits in the pipe until its end arrives, and Read
// returns a temporary net.Error when crypto/tls asks past the last whole
// record (tls.Conn does not fail on a temporary error). Each delivery thus
// decrypts every whole record received, on the loop, with no hand-off,
// reading the engine's buffer in place (an established connection buffers
// ciphertext of its own only for a partial record or while reading is
// paused, and lets it go once read), and it stops once crypto/tls has read
// them all, by count, without a last read only to learn that the
// ciphertext is used up. The plaintext goes through a buffer of the
// loop's; the only steady-state allocation is crypto/tls's own, which its
// API leaves no way around: the reader it makes each time it reads from
// its transport, one per delivery (crypto/tls on net makes one per read
// from the socket). BenchmarkEcho and BenchmarkServerEcho report it.
//
// What a handler writes in one loop iteration is encrypted at once when
// the engine flushes the connection: a protocol's header and payload,
// written apart, become one record, and a write's bytes reach crypto/tls
// from the engine's buffer, never from the caller's memory (crypto/tls's
// Write makes its argument escape to the heap).
//
// The handshake is different: tls.Conn cannot resume a handshake whose
// reader failed, temporary or not, so the handshake must block waiting for
// the peer's next flight. It runs on a goroutine (HandshakeContext), which
// the loop feeds the bytes it receives; each flight it writes goes to the
// loop as a task that queues it on the engine connection, so no batch
// buffer outlives the handshake; the goroutine hands the result to the
// loop and goes back to the loop's workers (package internal/workers: kept
// between handshakes, its stack already grown, which a goroutine started
// per handshake would grow again each time). Handshakes are CPU-bound
// anyway, and running them off the loop keeps a burst of them from
// stalling the connections already established. The handshake is bounded
// in time (WithHandshakeTimeout, default 10 s: a peer that stalls is cut)
// and in bytes held (WithMaxHandshakeBytes: past it reading pauses until
// the handshake has read them).
//
// An established connection also lets go of what its handshake grew: the
// engine connection's outbound buffers, sized by the flights (let go at
// engine.Wire.Open), and the handshake's wake channel.
//
// # Closing
//
// Close sends close_notify after what was written, flushes and closes; a
// peer's close_notify closes the connection (answered with ours) and
// OnClose gets io.EOF, as it does for a peer that closes at a record
// boundary without one; closing in the middle of a record gives
// io.ErrUnexpectedEOF. An engine.HalfCloseHandler is told instead
// (OnReadClosed, once every byte before the end is delivered) and answers
// before closing: a peer that pipelines requests and then ends its sending
// still gets every answer. CloseWrite sends close_notify and then the FIN.
// A TCP FIN that arrives during the handshake ends the handshake's input:
// it completes on what came before, if it can, and those bytes are
// delivered. A record that fails to decrypt or a peer's alert closes the
// connection with an error wrapping crypto/tls's (for a bad record, after
// crypto/tls's own alert is sent, and no close_notify). The loop's
// shutdown sends close_notify too, after what an engine.ShutdownHandler's
// OnShutdown writes, and OnClose gets engine.ErrShutdown. Abort sends
// nothing.
package looptls
