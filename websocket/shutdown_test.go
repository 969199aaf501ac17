package websocket_test

import (
	"errors"
	"testing"

	gws "github.com/gorilla/websocket"
	"github.com/stretchr/testify/require"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/httpserver"
	"github.com/ringloop/ringloop/internal/testenv"
	"github.com/ringloop/ringloop/loopgroup"
	"github.com/ringloop/ringloop/websocket"
)

// lastWords is an echo that sends one last message when its loop shuts
// down.
type lastWords struct{ *echo }

func (h lastWords) OnShutdown(c *websocket.Conn) {
	_ = c.WriteMessage(websocket.Text, []byte("last words"))
}

// TestShutdownGoingAway: when the loop shuts down, gorilla's client reads
// what the handler's OnShutdown sent, then a close frame with 1001 (going
// away); the server's OnClose gets 1001 and engine.ErrShutdown. Behind
// UpgradeFast and behind EngineHandler, with and without a ShutdownHandler.
func TestShutdownGoingAway(t *testing.T) {
	handlers := []struct {
		name string
		h    func(e *echo) websocket.Handler
		last string
	}{
		{"ShutdownHandler", func(e *echo) websocket.Handler { return lastWords{e} }, "last words"},
		{"plain", func(e *echo) websocket.Handler { return e }, ""},
	}
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		for _, via := range []string{"UpgradeFast", "EngineHandler"} {
			for _, hc := range handlers {
				t.Run(via+"/"+hc.name, func(t *testing.T) {
					testenv.CheckLeaks(t)
					e := newEcho()
					loop, err := engine.New(c.Options()...)
					require.NoError(t, err)
					addr := listenOn(t, loop, via, hc.h(e))
					ws := dialGorilla(t, addr)
					require.NoError(t, ws.WriteMessage(gws.TextMessage, []byte("hello")))
					_, got, err := ws.ReadMessage()
					require.NoError(t, err)
					require.Equal(t, "hello", string(got))

					require.NoError(t, loop.Close())
					if hc.last != "" {
						_, got, err = ws.ReadMessage()
						require.NoError(t, err)
						require.Equal(t, hc.last, string(got))
					}
					_, _, err = ws.ReadMessage()
					var ce *gws.CloseError
					require.True(t, errors.As(err, &ce), "read after the shutdown: %v", err)
					require.Equal(t, websocket.CloseGoingAway, ce.Code)
					cl := e.next(t)
					require.Equal(t, websocket.CloseGoingAway, cl.code)
					require.ErrorIs(t, cl.err, engine.ErrShutdown)
				})
			}
		}
	})
}

// listenOn serves h on loop, behind UpgradeFast or EngineHandler,
// and returns the address.
func listenOn(t *testing.T, loop *engine.Loop, via string, h websocket.Handler) string {
	t.Helper()
	if via == "EngineHandler" {
		eh, err := websocket.EngineHandler(h)
		require.NoError(t, err)
		ln, err := engine.Listen(loop, "tcp", "127.0.0.1:0", eh)
		require.NoError(t, err)
		return ln.Addr().String()
	}
	s, err := httpserver.NewFast(httpserver.HandlerFunc(func(w *httpserver.Response, r *httpserver.Request) {
		_ = websocket.UpgradeFast(w, r, h)
	}))
	require.NoError(t, err)
	a, err := s.Listen(loop, "tcp", "127.0.0.1:0", loopgroup.WithConnOptions())
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return a.String()
}
