package tests

import (
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/internal/testenv"
)

// addrsHandler hands each accepted connection's addresses to the test.
type addrsHandler struct{ addrs chan [2]net.Addr }

func (h addrsHandler) OnOpen(c *engine.Conn)       { h.addrs <- [2]net.Addr{c.LocalAddr(), c.RemoteAddr()} }
func (h addrsHandler) OnData(*engine.Conn, []byte) {}
func (h addrsHandler) OnClose(*engine.Conn, error) {}

// TestAcceptedAddrs: an accepted connection's LocalAddr and RemoteAddr are
// the peer's RemoteAddr and LocalAddr, over IPv4, IPv6 (where the machine
// has a loopback for it) and a Unix socket.
func TestAcceptedAddrs(t *testing.T) {
	nets := [][2]string{{"tcp", "127.0.0.1:0"}, {"unix", ""}}
	if probe, err := net.Listen("tcp6", "[::1]:0"); err == nil {
		probe.Close()
		nets = append(nets, [2]string{"tcp6", "[::1]:0"})
	}
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		l := newLoop(t, c)
		for _, n := range nets {
			addr := n[1]
			if n[0] == "unix" {
				addr = t.TempDir() + "/addrs.sock"
			}
			h := addrsHandler{addrs: make(chan [2]net.Addr, 1)}
			ln, err := engine.Listen(l, n[0], addr, h)
			require.NoError(t, err)
			conn, err := net.DialTimeout(ln.Addr().Network(), ln.Addr().String(), 5*time.Second)
			require.NoError(t, err)
			var got [2]net.Addr
			select {
			case got = <-h.addrs:
			case <-time.After(30 * time.Second):
				t.Fatalf("%s: no connection accepted", n[0])
			}
			require.NotNil(t, got[0], n[0])
			require.Equal(t, conn.RemoteAddr().String(), got[0].String(), "%s: LocalAddr", n[0])
			if n[0] != "unix" { // a Unix client socket has no name
				require.NotNil(t, got[1], n[0])
				require.Equal(t, conn.LocalAddr().String(), got[1].String(), "%s: RemoteAddr", n[0])
			}
			require.NoError(t, conn.Close())
			require.NoError(t, ln.Close())
		}
	})
}
