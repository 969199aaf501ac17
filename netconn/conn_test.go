package netconn_test

import (
	"net"
	"testing"

	"golang.org/x/net/nettest"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/netconn"
)

// TestConn runs Go's net.Conn conformance suite on ringloop connections:
// both ends dialed and accepted through ringloop.
func TestConn(t *testing.T) {
	forEach(t, func(t *testing.T, loops engine.Loops) {
		nettest.TestConn(t, func() (net.Conn, net.Conn, func(), error) {
			ln, err := netconn.Listen(loops, "tcp", "127.0.0.1:0")
			if err != nil {
				return nil, nil, nil, err
			}
			c1, c2, err := pipe(t, loops, ln)
			if err != nil {
				ln.Close()
				return nil, nil, nil, err
			}
			return c1, c2, func() { c1.Close(); c2.Close(); ln.Close() }, nil
		})
	})
}
