package looptls

import (
	"crypto/tls"
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/internal/testenv"
	"github.com/ringloop/ringloop/tasks"
)

// idleEcho echoes and hands each opened connection to the test.
type idleEcho struct{ opens chan *engine.Conn }

func (h idleEcho) OnOpen(c *engine.Conn)             { h.opens <- c }
func (h idleEcho) OnData(c *engine.Conn, b []byte)   { _, _ = c.Write(b) }
func (h idleEcho) OnClose(c *engine.Conn, err error) {}

// TestIdleKeepsNoCiphertext: an established connection that has gone idle
// holds no ciphertext buffer of its own, whether its handshake was fed in
// one delivery or many, and after it has read records across many
// deliveries: an idle connection costs crypto/tls's state and the
// engine's, none of this package's buffers.
func TestIdleKeepsNoCiphertext(t *testing.T) {
	p := testenv.NewPKI(t)
	cfg := &tls.Config{Certificates: []tls.Certificate{p.Leaf(t, "localhost", "localhost", "127.0.0.1")}}
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		loop, err := engine.New(c.Options()...)
		require.NoError(t, err)
		t.Cleanup(func() { require.NoError(t, loop.Close()) })
		h := idleEcho{opens: make(chan *engine.Conn, 1)}
		ln, err := engine.Listen(loop, "tcp", "127.0.0.1:0", Server(h, cfg))
		require.NoError(t, err)
		t.Cleanup(func() { _ = ln.Close() })
		tc, err := tls.Dial("tcp", ln.Addr().String(), &tls.Config{RootCAs: p.Pool, ServerName: "localhost"})
		require.NoError(t, err)
		defer tc.Close()
		require.NoError(t, tc.SetDeadline(time.Now().Add(time.Minute)))
		sc := <-h.opens
		held := func() int {
			ch := make(chan int, 1)
			require.NoError(t, loop.Execute(tasks.Func(func() {
				tr := sc.Transport().(*transport)
				ch <- cap(tr.p.buf) + len(tr.p.src)
			})))
			return <-ch
		}
		echo := func(n int) {
			msg := make([]byte, n)
			for i := range msg {
				msg[i] = byte(i)
			}
			_, err := tc.Write(msg)
			require.NoError(t, err)
			got := make([]byte, n)
			_, err = io.ReadFull(tc, got)
			require.NoError(t, err)
			require.Equal(t, msg, got)
		}
		echo(1)
		require.Zero(t, held(), "after the handshake and one echo")
		echo(200 << 10) // records across many deliveries
		require.Zero(t, held(), "after a large echo")

	})
}
