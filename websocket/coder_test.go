package websocket_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/stretchr/testify/require"

	"github.com/ringloop/ringloop/internal/testenv"
)

// TestCoderClient cross-tests with coder/websocket's client, written by
// others: messages whole and streamed in fragments (its Writer sends a
// frame per Write), a ping it waits a pong for, and a close with a code
// both sides agree on.
func TestCoderClient(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		e := newEcho()
		addr := serve(t, c, e, nil)
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		ws, _, err := websocket.Dial(ctx, "ws://"+addr+"/echo", &websocket.DialOptions{CompressionMode: websocket.CompressionDisabled})
		require.NoError(t, err)
		defer ws.CloseNow()
		ws.SetReadLimit(4 << 20)
		for i, n := range []int{0, 1, 126, 65536, 1 << 20} {
			kind := websocket.MessageBinary
			if i%2 == 0 {
				kind = websocket.MessageText
			}
			msg := bytes.Repeat([]byte{'A' + byte(i)}, n)
			require.NoError(t, ws.Write(ctx, kind, msg))
			gotKind, got, err := ws.Read(ctx)
			require.NoError(t, err)
			require.Equal(t, kind, gotKind)
			require.True(t, bytes.Equal(msg, got), "message %d", i)

			w, err := ws.Writer(ctx, kind)
			require.NoError(t, err)
			for off := 0; off < n; off += 4000 {
				_, err = w.Write(msg[off:min(n, off+4000)])
				require.NoError(t, err)
			}
			require.NoError(t, w.Close())
			_, got, err = ws.Read(ctx)
			require.NoError(t, err)
			require.True(t, bytes.Equal(msg, got), "streamed message %d", i)
		}
		pinged := make(chan error, 1)
		go func() { pinged <- ws.Ping(ctx) }()
		for waiting := true; waiting; {
			// Its pong is taken by a Read in progress: echo until it came.
			require.NoError(t, ws.Write(ctx, websocket.MessageText, []byte("x")))
			_, got, err := ws.Read(ctx)
			require.NoError(t, err)
			require.Equal(t, "x", string(got))
			select {
			case err := <-pinged:
				require.NoError(t, err)
				waiting = false
			default:
			}
		}
		require.NoError(t, ws.Close(websocket.StatusCode(4002), "coder bye"))
		require.Equal(t, closed{4002, "coder bye", nil}, e.next(t))
	})
}
