// Package echo is the echo handler the examples and tests share: it writes
// back what it reads and stops reading while the peer is slow to take it, so
// a slow reader cannot grow the server's memory past the high watermark.
package echo

import "github.com/ringloop/ringloop/engine"

// Handler echoes every byte it receives.
type Handler struct{}

// OnOpen does nothing: the connection starts reading by itself.
func (Handler) OnOpen(c *engine.Conn) {}

// OnData writes b back; past the high watermark it pauses reading.
func (Handler) OnData(c *engine.Conn, b []byte) {
	_, _ = c.Write(b)
	if !c.Writable() {
		c.PauseRead()
	}
}

// OnWritabilityChanged resumes reading once the backlog has drained.
func (Handler) OnWritabilityChanged(c *engine.Conn, writable bool) {
	if writable {
		c.ResumeRead()
	}
}

// OnClose does nothing.
func (Handler) OnClose(c *engine.Conn, err error) {}
