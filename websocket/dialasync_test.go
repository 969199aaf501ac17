package websocket_test

import (
	"bufio"
	"bytes"
	"context"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ringloop/ringloop/internal/testenv"
	"github.com/ringloop/ringloop/tasks"
	"github.com/ringloop/ringloop/websocket"
)

// TestDialAsyncFromLoop: a handler on a loop dials through DialAsync
// without blocking it (the loop runs the dial it started, on itself), gets
// the connection in a listener on that loop and talks over it; Dial's
// errors come as failed futures: a refused connect, a bad URL, a
// cancelled handshake.
func TestDialAsyncFromLoop(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		addr := serve(t, c, newEcho(), nil)
		loop := newLoop(t, c)
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()

		cl := newClient()
		type outcome struct {
			ws     *websocket.Conn
			err    error
			onLoop bool
		}
		got := make(chan outcome, 1)
		require.NoError(t, loop.Execute(tasks.Func(func() {
			f := websocket.DialAsync(ctx, loop, "ws://"+addr+"/echo", cl)
			f.AddListener(loop, func(f tasks.Future[*websocket.Conn]) {
				ws, _, err := f.Poll()
				if err == nil {
					err = ws.WriteMessage(websocket.Text, []byte("from the loop"))
				}
				got <- outcome{ws, err, loop.InEventLoop()}
			})
		})))
		var o outcome
		select {
		case o = <-got:
		case <-ctx.Done():
			t.Fatal("DialAsync from the loop never completed")
		}
		require.NoError(t, o.err)
		require.True(t, o.onLoop, "the listener ran off the loop")
		<-cl.opens
		m := cl.next(t)
		require.Equal(t, websocket.Text, m.kind)
		require.True(t, bytes.Equal([]byte("from the loop"), m.p))
		require.NoError(t, o.ws.Close(websocket.CloseNormal, ""))
		cl.closed(t)

		// Off the loop, Await works as Dial does.
		cl = newClient()
		ws, err := websocket.DialAsync(ctx, loop, "ws://"+addr+"/echo", cl).Await(ctx)
		require.NoError(t, err)
		require.NoError(t, ws.WriteMessage(websocket.Binary, []byte{1, 2, 3}))
		require.Equal(t, []byte{1, 2, 3}, cl.next(t).p)
		require.NoError(t, ws.Close(websocket.CloseNormal, ""))
		cl.closed(t)

		// Failures.
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		gone := ln.Addr().String()
		ln.Close()
		_, err = websocket.DialAsync(ctx, loop, "ws://"+gone+"/", newClient()).Await(ctx)
		var oe *net.OpError
		require.ErrorAs(t, err, &oe)
		_, err = websocket.DialAsync(ctx, loop, "http://"+gone+"/", newClient()).Await(ctx)
		require.ErrorContains(t, err, `scheme "http"`)

		read := make(chan struct{})
		silent := rawServer(t, func(conn net.Conn, r *bufio.Reader, _ *http.Request) {
			close(read)
			_, _ = r.ReadByte()
		})
		cctx, ccancel := context.WithCancel(ctx)
		f := websocket.DialAsync(cctx, loop, "ws://"+silent+"/", newClient())
		<-read
		ccancel()
		_, err = f.Await(ctx)
		require.ErrorIs(t, err, context.Canceled)
	})
}
