// Package netconn puts Go's net.Listener and net.Conn on ringloop loops, so
// code written for package net (net/http with HTTP/2, crypto/tls, gRPC,
// database and cache clients) runs on io_uring or epoll loops unchanged.
//
// A Conn sits between its loop and ordinary goroutines. The loop receives
// into a bounded read buffer and stops reading the socket when it is full
// (PauseRead), so a reader that falls behind costs bounded memory; Read
// drains it. Write copies into a bounded write buffer that the loop moves
// into the connection's outbound buffer, one task per burst of Writes, while
// the connection is under its high watermark; past it Write blocks, so a
// slow peer slows the writer instead of growing memory. Deadlines behave as
// package net's (os.ErrDeadlineExceeded, also for calls already waiting),
// Read and Write may run at the same time from different goroutines, and
// CloseWrite half-closes. Go's nettest.TestConn suite passes on every
// backend and kernel profile. Hijack turns a connection an engine handler
// serves into a Conn (an HTTP server's http.Hijacker; over TLS, package
// looptls, the Conn carries plaintext, the records staying on the loop).
//
// A Listener accepts on one loop and serves each connection on the loop its
// chooser picks: pass one *engine.Loop, or a *loopgroup.Group to spread
// connections over its loops (with MSG_RING hand-off where the kernel has
// it). Accepted connections wait for Accept in a bounded queue; when it is
// full the loop stops accepting and connections wait in the kernel's
// backlog.
//
// Which way to use ringloop: a Handler on the loop (package engine) is the
// fast path, with no goroutine per connection and no copies between the
// loop and a goroutine; package netconn gives up some of that speed (one
// copy each way and a goroutine hand-off per burst) to run existing net code
// on the loops.
//
// Keep it on parked loops (engine.ThreadingParked, the default): every
// message passes between the loop and a goroutine, which a parked loop's
// goroutine and the reader can do on one thread, while a locked loop's
// thread must wake the reader's for each. make bench-compare (the figures
// are in bench/results/latest.md): net/http over netconn serves 1.6x
// net/http over net at 50 keep-alive connections on the default, 0.68x on
// a locked loop.
//
// Write hands its bytes to the loop rather than writing the socket from the
// caller's goroutine as net.Conn does. Writing from the goroutine saves a
// hand-off where one connection talks at a time, but at many connections
// each goroutine pays its own send where the loop sends an iteration's
// replies together (on io_uring in one system call); both ways were
// compared with make bench-compare's netconn rows (net/http over netconn,
// TLS echo over netconn), and the loop's way lost least.
//
// Conn implements neither io.ReaderFrom nor io.WriterTo: net.TCPConn's pay
// because they splice or sendfile inside the kernel, while every byte of a
// Conn passes through the loop's buffers anyway, so io.Copy's own 32 KiB
// buffer costs the same copies as they would.
package netconn
