package engine

import (
	"fmt"
	"net"
)

// Connection errors; all closed-connection errors match net.ErrClosed.
var (
	ErrConnClosed  = fmt.Errorf("engine: connection closed: %w", net.ErrClosed)
	ErrAborted     = fmt.Errorf("engine: connection aborted: %w", net.ErrClosed)
	ErrWriteClosed = fmt.Errorf("engine: write side closed: %w", net.ErrClosed)
	// ErrCloseTimeout: a graceful close could not send what was written
	// within the close timeout (a peer that does not read), so the
	// connection was aborted and the unsent bytes dropped.
	ErrCloseTimeout = fmt.Errorf("engine: close timed out with bytes unsent: %w", ErrAborted)
)

// errOffLoop is the error of a loop-only Conn method called from another
// goroutine: a programming error, reported rather than ignored.
func errOffLoop(method string) error {
	return fmt.Errorf("engine: Conn.%s called off the connection's loop", method)
}
