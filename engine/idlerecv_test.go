package engine_test

import (
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/internal/testenv"
)

// byteCounter counts what each server connection reads, by the peer's
// address, and hands each opened connection to the test.
type byteCounter struct {
	mu     sync.Mutex
	got    map[string]int
	opened chan *engine.Conn
}

func (b *byteCounter) OnOpen(c *engine.Conn) { b.opened <- c }
func (b *byteCounter) OnData(c *engine.Conn, p []byte) {
	b.mu.Lock()
	b.got[c.RemoteAddr().String()] += len(p)
	b.mu.Unlock()
}
func (b *byteCounter) OnClose(*engine.Conn, error) {}

func (b *byteCounter) bytes(peer net.Conn) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.got[peer.LocalAddr().String()]
}

// TestIdleConnsLeaveBuffersForNewOnes: many times more idle connections than
// the loop has receive buffers, then new connections that write a first
// request at once: each request must reach the handler, also after the
// server closed the idle ones. On a kernel whose buffer-select receive keeps
// its provided buffer while it waits (Debian's 5.10, whose io_uring is
// 5.15's), every idle connection held one, and the new connections' first
// requests sat unread (ENOBUFS at every re-arm) until a header timeout
// closed them: websocket's TestHubThousandConnections failed so on that
// kernel (internal/uring's package doc).
func TestIdleConnsLeaveBuffersForNewOnes(t *testing.T) {
	const buffers = 8
	idle := 4 * buffers
	if testing.Short() {
		idle = 2 * buffers
	}
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		l := newLoop(t, c, engine.WithDriverConfig(engine.DriverConfig{BufferCount: buffers, BufferSize: 4096}))
		h := &byteCounter{got: map[string]int{}, opened: make(chan *engine.Conn, 4*idle)}
		ln, err := engine.Listen(l, "tcp", "127.0.0.1:0", h)
		require.NoError(t, err)
		defer ln.Close()
		dial := func() net.Conn {
			p, err := net.DialTimeout("tcp", ln.Addr().String(), 10*time.Second)
			require.NoError(t, err)
			t.Cleanup(func() { p.Close() })
			return p
		}
		opened := func() *engine.Conn {
			select {
			case c := <-h.opened:
				return c
			case <-time.After(30 * time.Second):
				t.Fatal("no connection opened in 30 s")
				return nil
			}
		}
		request := []byte("GET / HTTP/1.1\r\n\r\n")
		// talk dials n connections one after another, each writing its
		// request at once, and waits until the server has read it.
		talk := func(round string, n int) {
			for i := range n {
				p := dial()
				_, err := p.Write(request)
				require.NoError(t, err)
				opened()
				testenv.Eventually(t, 30*time.Second, fmt.Sprintf("%s: connection %d's first request read", round, i), func() bool {
					return h.bytes(p) == len(request)
				})
			}
		}
		// Idle connections, each with a receive waiting for data.
		var idles []*engine.Conn
		for range idle {
			dial()
			idles = append(idles, opened())
		}
		talk("beside idle connections", buffers)
		// The server closes the idle ones, cancelling their receives.
		for _, ic := range idles {
			onLoop(t, l, func() error { return ic.Close() })
		}
		talk("after idle connections closed", idle)
	})
}
