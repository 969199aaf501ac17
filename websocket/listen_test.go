package websocket_test

import (
	"bytes"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	gws "github.com/gorilla/websocket"
	"github.com/stretchr/testify/require"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/internal/testenv"
	"github.com/ringloop/ringloop/websocket"
)

// TestEngineHandler: on a plain engine listener the handler reads the
// handshake itself: gorilla's client talks to it (a 100 KB message, a
// close), a frame sent in the same write as the request is the first
// message, the handshake may arrive a byte at a time, and a bad request
// is refused with its status and the connection closed.
func TestEngineHandler(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		e := newEcho()
		h, err := websocket.EngineHandler(e, websocket.WithSubprotocols("v1"))
		require.NoError(t, err)
		loop, err := engine.New(c.Options()...)
		require.NoError(t, err)
		t.Cleanup(func() { require.NoError(t, loop.Close()) })
		ln, err := engine.Listen(loop, "tcp", "127.0.0.1:0", h)
		require.NoError(t, err)
		t.Cleanup(func() { ln.Close() })
		addr := ln.Addr().String()

		d := gws.Dialer{HandshakeTimeout: 30 * time.Second, Subprotocols: []string{"v0", "v1"}}
		ws, _, err := d.Dial("ws://"+addr+"/any", nil)
		require.NoError(t, err)
		defer ws.Close()
		require.Equal(t, "v1", ws.Subprotocol())
		_ = ws.SetReadDeadline(time.Now().Add(60 * time.Second))
		msg := bytes.Repeat([]byte("z"), 100<<10)
		require.NoError(t, ws.WriteMessage(gws.BinaryMessage, msg))
		_, got, err := ws.ReadMessage()
		require.NoError(t, err)
		require.True(t, bytes.Equal(msg, got))
		require.NoError(t, ws.WriteMessage(gws.CloseMessage, gws.FormatCloseMessage(1000, "")))
		_, _, err = ws.ReadMessage()
		var ce *gws.CloseError
		require.True(t, errors.As(err, &ce), "%v", err)
		require.Equal(t, closed{1000, "", nil}, e.next(t))

		req := "GET / HTTP/1.1\r\nHost: a\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
			"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
		for _, chop := range []bool{false, true} {
			conn, err := net.DialTimeout("tcp", addr, 10*time.Second)
			require.NoError(t, err)
			_ = conn.SetDeadline(time.Now().Add(60 * time.Second))
			all := append([]byte(req), frame(finText, []byte("early"), true)...)
			if chop {
				for i := range all {
					_, err = conn.Write(all[i : i+1])
					require.NoError(t, err)
				}
			} else {
				_, err = conn.Write(all)
				require.NoError(t, err)
			}
			rc := &rawConn{conn, newReader(conn)}
			resp, err := http.ReadResponse(rc.r, nil)
			require.NoError(t, err)
			require.Equal(t, 101, resp.StatusCode)
			require.Equal(t, "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=", resp.Header.Get("Sec-WebSocket-Accept"))
			f, err := rc.read()
			require.NoError(t, err)
			require.Equal(t, "early", string(f.payload))
			conn.Close()
			require.Equal(t, websocket.CloseAbnormal, e.next(t).code)
		}

		conn, err := net.DialTimeout("tcp", addr, 10*time.Second)
		require.NoError(t, err)
		defer conn.Close()
		_ = conn.SetDeadline(time.Now().Add(60 * time.Second))
		_, err = io.WriteString(conn, strings.Replace(req, "Version: 13", "Version: 8", 1))
		require.NoError(t, err)
		resp, err := http.ReadResponse(newReader(conn), nil)
		require.NoError(t, err)
		require.Equal(t, http.StatusUpgradeRequired, resp.StatusCode)
		require.Equal(t, "13", resp.Header.Get("Sec-WebSocket-Version"))
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		require.Contains(t, string(body), "13")
	})
}
