package engine

// Handler receives a connection's events. Every callback of a connection runs
// on its loop, one at a time, so a handler needs no locks for per-connection
// state.
type Handler interface {
	// OnOpen is called once the connection is established.
	OnOpen(c *Conn)
	// OnData is called with received bytes, after those an earlier call
	// kept with c.Keep; b is valid only during the call. A handler parses
	// what is whole, keeps the unfinished rest with c.Keep (it is copied)
	// and returns; bytes it neither uses nor keeps are consumed.
	OnData(c *Conn, b []byte)
	// OnClose is called once, after the fd is closed, with why: nil after
	// the connection's own Close (or CloseWithError(nil)), io.EOF (the peer
	// closed), io.ErrUnexpectedEOF (the peer closed while the handler
	// kept an unfinished frame, which c.Kept still returns), an errno such
	// as ECONNRESET, ErrIdleTimeout, ErrShutdown (the loop shut down),
	// the error given to CloseWithError,
	// ErrAborted, ErrCloseTimeout (Close could not flush in time) or
	// tasks.ErrPanicked (a callback of the connection panicked).
	//
	// A panic in any callback of a connection ends that connection only: it
	// is closed, unsent bytes dropped, and OnClose receives an error wrapping
	// tasks.ErrPanicked; the loop and its other connections go on.
	OnClose(c *Conn, err error)
}

// WritabilityHandler is an optional Handler extension: it learns when the
// bytes waiting to be sent cross the high watermark (writable false) and fall
// back under the low one (writable true), Netty's channelWritabilityChanged.
type WritabilityHandler interface {
	OnWritabilityChanged(c *Conn, writable bool)
}

// HalfCloseHandler is an optional Handler extension (Netty's
// ALLOW_HALF_CLOSURE): when the peer shuts down its write side, OnReadClosed
// is called instead of closing the connection, which stays open for writing
// until Close or CloseWrite. Once both directions are shut (the peer's FIN
// seen and CloseWrite's FIN sent, in either order) the connection is closed,
// after its output drained, and OnClose follows with io.EOF.
type HalfCloseHandler interface {
	OnReadClosed(c *Conn)
}

// ShutdownHandler is an optional Handler extension: OnShutdown is called on
// the loop, once, for each open connection when its loop's shutdown begins
// (Shutdown, Close, ShutdownGracefully), before the connection is closed:
// the protocol's last word (a goodbye line, WebSocket's 1001, TLS's
// close_notify). What it writes is flushed before the fd is closed, and
// OnClose follows with ErrShutdown; it cannot keep the connection open. The
// flush is bounded (see the package doc, Lifecycle): past the bound the
// connection is reset and OnClose gets ErrCloseTimeout. Without it a
// connection is closed as it stands.
type ShutdownHandler interface {
	OnShutdown(c *Conn)
}
