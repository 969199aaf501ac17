package websocket_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ringloop/ringloop/internal/testenv"
	"github.com/ringloop/ringloop/websocket"
)

// TestHubClientMember: a client connection (Dial) in a hub gets every
// broadcast as a frame of its own, masked with a fresh key, where server
// connections share one unmasked frame.
func TestHubClientMember(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		loop := newLoop(t, c)
		frames := make(chan clientFrame, 16)
		addr := rawServer(t, func(conn net.Conn, r *bufio.Reader, req *http.Request) {
			_, _ = io.WriteString(conn, answer101(req, ""))
			for {
				f, err := readClientFrame(r)
				if err != nil {
					close(frames)
					return
				}
				frames <- f
				if f.b0 == finClose {
					_, _ = conn.Write(frame(finClose, f.payload, false))
				}
			}
		})
		cl := newClient()
		ws := dial(t, loop, "ws://"+addr+"/", cl)
		hub := new(websocket.Hub)
		require.NoError(t, onLoop(t, ws, func() error { hub.Add(ws); return nil }))
		const n = 5
		for i := range n {
			require.NoError(t, hub.Broadcast(websocket.Text, fmt.Appendf(nil, "news %d", i)))
		}
		keys := map[[4]byte]bool{}
		for i := range n {
			f := <-frames
			require.Equal(t, byte(finText), f.b0)
			require.True(t, f.masked, "broadcast %d reached the server unmasked", i)
			require.Equal(t, fmt.Sprintf("news %d", i), string(f.payload))
			keys[f.key] = true
		}
		require.Len(t, keys, n, "a fresh key per frame")
		require.NoError(t, ws.Close(1000, ""))
		for range frames {
		}
		cl.closed(t)
	})
}
