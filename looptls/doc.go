// Package looptls runs TLS on engine connections with Go's own crypto/tls,
// its records driven by the loop: a handler receives plaintext and writes
// plaintext, on the loop, and an established connection costs no goroutine.
//
//	cfg := &tls.Config{Certificates: []tls.Certificate{cert}, NextProtos: []string{"http/1.1"}}
//	ln, err := engine.Listen(loop, "tcp", ":8443", looptls.Server(h, cfg))
//
// h is a looptls.Handler: its OnOpen follows the handshake, OnData gets
// decrypted bytes, and its *Conn encrypts what it writes (Write on the
// loop, AsyncWrite from anywhere), sends close_notify on Close, and tells
// the handshake's outcome (ConnectionState: ALPN's NegotiatedProtocol,
// SNI's ServerName, PeerCertificates, DidResume). The handler cannot be an
// engine.Handler: engine.Conn.Write would put plaintext into the TLS
// stream. Conn.Engine gives the engine connection for the rest (its loop,
// watermarks, Buffered). Conn.SetHandler hands an established connection
// to another Handler with the plaintext not yet consumed (a protocol
// upgrade: httpserver's UpgradeTLS, websocket's wss; netconn.HijackTLS
// builds a net.Conn on it), and Conn.Reading tells a frame splitter where
// a pause or a hand-over stops it, as engine.Conn.Reading does. Client is
// the same for engine.Dial:
//
//	engine.Dial(ctx, loop, "tcp", "example.com:443", looptls.Client(h, &tls.Config{ServerName: "example.com"}))
//
// Everything of tls.Config works as with crypto/tls, since crypto/tls
// runs it: certificates, GetCertificate and GetConfigForClient (called on
// the handshake goroutine), client certificates, session tickets and
// resumption. A connection whose handshake fails never reaches OnOpen; a
// HandshakeErrorHandler learns why. A peer that speaks plaintext to the
// TLS port by mistake can be answered in plaintext before the close by a
// PlaintextHandler (httpserver answers HTTP with a 400, as net/http does).
//
// # How the records reach crypto/tls
//
// Each connection's tls.Conn runs over an in-memory net.Conn: its Read
// returns the ciphertext the loop received, its Write queues ciphertext on
// the engine connection (so watermarks and backpressure count what
// reaches the socket). Once the connection is established, the transport
// follows the record boundaries (each record's 5-byte header gives its
// length) and hands crypto/tls whole records only: a record's start waits
// in the transport until its end arrives, and Read returns a temporary
// net.Error when crypto/tls asks past the last whole record (tls.Conn does
// not fail on a temporary error). OnData thus decrypts every whole record
// received, on the loop, with no hand-off, reading the engine's buffer in
// place (an established connection buffers ciphertext of its own only for
// a partial record or while reading is paused, and lets it go once read),
// and it stops once crypto/tls has read them all, by count, without a last
// read only to learn that the ciphertext is used up. The plaintext goes
// through a pooled buffer (none held per idle connection); the only
// steady-state allocation is crypto/tls's own, which its API leaves no way
// around: the 24-byte reader it makes each time it reads from its
// transport, one per delivery (crypto/tls on net makes one per read from
// the socket: one per message in an echo). BenchmarkEcho and
// BenchmarkServerEcho report it.
//
// The handshake is different: tls.Conn cannot resume a handshake whose
// reader failed, temporary or not, so the handshake must block waiting
// for the peer's next flight. It runs on a goroutine (HandshakeContext),
// which the loop feeds the bytes it receives; each flight it writes goes
// to the loop as a task that queues it on the engine connection, so no
// batch buffer outlives the handshake; the goroutine hands the result to
// the loop and goes back to the loop's workers (package internal/workers:
// kept between handshakes, its stack already grown, which a goroutine
// started per handshake paid again each time: 2.7% of its CPU).
// Handshakes are CPU-bound anyway, and running them off the loop keeps a
// burst of them from stalling the connections already established. The
// handshake is bounded in time (WithHandshakeTimeout, default 10 s: a
// peer that stalls is cut) and in bytes held (WithMaxHandshakeBytes: past
// it reading pauses until the handshake has read them).
//
// An established connection also lets go of what its handshake grew: the
// engine connection's outbound buffers, sized by the flights
// (engine.Conn.ReleaseSendBuffers), and the handshake's wake channel.
//
// # Costs
//
// Measured 2026-11-26 on a shared 2-core VM, indicative only (other jobs
// ran meanwhile). An idle server connection after a full handshake and one
// echo holds 7.8 KB of live heap, of which crypto/tls's own state is about
// 6.5 KB (its input and handshake buffers 3.5 KB, the two AES-GCM states
// 1.75 KB, tls.Conn 0.9 KB), the engine's 0.7 KB and this package's 0.4 KB
// (benchserver's heap command, 2000 connections). That was 9.9 KB before
// the flights' buffers were released: RSS per idle connection in the bench
// went from 16.0-17.7 KB to 13.6-14.3 KB, against 45.6 KB for net+tls
// (0.30×; goal 0.25×, out of reach while crypto/tls keeps its own):
//
//	cd bench && go run ./cmd/bench -mode full -cases p1-tls-idle-10k -peers looptls-uring,looptls-epoll
//
// One at a time, a full handshake costs about what it costs on net:
// BenchmarkHandshake (both sides in one process; go test -run '^$' -bench
// Handshake/ -benchtime 2s -count 2 ./looptls) gives 1.05-1.08 ms parked
// on io_uring, 1.11-1.14 ms on epoll, against 1.04-1.08 ms, with 910-912
// allocations against 897. With 16 dialers and the server on one core
// (p1-tls-handshake-c16) the sweep of 16:58 that day ranked looptls
// 0.81-0.83× net+tls; runs of the case alone at 18:49-18:51, the machine
// quieter, alternating the code before and after this change: before
// 0.93-0.99×, after 0.96-0.99×, the server's CPU per handshake 359-378 µs
// against net+tls's 355-362 (runs while the machine was busy ranged
// 0.80-1.18×: noise). What is left is likely when a flight leaves: the
// handshake goroutine hands it to the loop, and with one P a parked loop
// runs only once every runnable goroutine (the other handshakes) has
// blocked, so a flight waited 0.5-2 ms on average for the loop on the
// busy machine, while net's goroutine writes its own at once.
//
//	cd bench && go run ./cmd/bench -mode full -cases p1-tls-handshake-c16 -peers net+tls,looptls-uring,looptls-epoll
//
// Once established, an echoed message costs the server crypto/tls's Read
// and Write in OnData (AES-GCM about half of that) and little else of
// this package's. Changes of 2026-11-26: whole records only, and a count
// instead of a last read to end each delivery (one allocation per
// delivery instead of two), no lock on an established transport, and a
// record split between deliveries waiting in a pooled buffer. CPU profiles
// of BenchmarkServerEcho (crypto/tls clients on net; looptls and crypto/tls
// on net serving in the same run; 1 KiB, the loop parked, io_uring and
// epoll; the code before and after alternating, 600,000 messages each,
// 19:10-19:26 that day, the machine busy):
//
//	go test -run '^$' -bench 'ServerEcho/c(64|1)-1024/' -benchtime 600000x -cpuprofile cpu.out ./looptls
//
// put OnData at 1.52-1.80 µs a message before and 1.03-1.55 after at 64
// connections (1.10-1.75 and 1.05-1.35 at one), and the loop's CPU per
// message at 6.1-8.3 µs after, against 8.0-8.4 for crypto/tls on net's
// goroutines at 64 connections, 9.2-10.2 against 7.4-7.7 at one. Its
// allocations: 2 per message, client and server (net's: 2; before: 3).
// The bench's cases, run alone at 19:15-19:20 alternating before and after
// on a machine so busy that throughput was a third of a quiet sweep's,
// gave allocations per message at one connection 2.04-2.07 before and
// 1.04-1.06 after (net+tls 1.03-1.04), and throughput ratios from 0.45× to
// 1.41× net+tls both before and after: noise, no ranking.
//
//	cd bench && go run ./cmd/bench -mode full -cases p1-tls-echo-c64-1024,p1-tls-echo-c1-1024 -peers net+tls,looptls-uring,looptls-epoll
//
// What separates the rest from the goals (1.2× net+tls at 64 connections
// at 0.85× its CPU, 1.0× at one) is not in this package: the loop's CPU
// per message goes mostly to the send and receive system calls and its
// wait, as in the plain echo, where ringloop and net are even (6.9-7.9
// against 6.9 µs in p1-echo-c64-1024); at one connection, to the loop's
// park and wake for every message.
//
// # Closing
//
// Conn.Close sends close_notify, flushes and closes; a peer's close_notify
// closes the connection (answered with ours) and OnClose gets io.EOF, as it
// does for a peer that closes at a record boundary without one; closing in
// the middle of a record gives io.ErrUnexpectedEOF. A HalfCloseHandler is
// told instead (OnReadClosed, once every byte before the end is delivered)
// and answers before closing: a peer that pipelines requests and then
// ends its sending still gets every answer. A TCP FIN that arrives during
// the handshake ends the handshake's input: it completes on what came
// before, if it can, and those bytes are delivered. A record that fails to
// decrypt or a peer's alert closes the connection with an error wrapping
// crypto/tls's (for a bad record, after crypto/tls's own alert is sent).
// The loop's shutdown sends close_notify too, after what a
// ShutdownHandler's OnShutdown writes, and OnClose gets engine.ErrShutdown.
// Closing the engine connection directly closes without close_notify.
package looptls
