package websocket_test

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ringloop/ringloop/internal/testenv"
	"github.com/ringloop/ringloop/websocket"
)

// roundTrip sends a raw request and reads the response head.
func roundTrip(t *testing.T, addr, req string) (*http.Response, net.Conn) {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, 10*time.Second)
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close() })
	_ = conn.SetDeadline(time.Now().Add(60 * time.Second))
	_, err = io.WriteString(conn, req)
	require.NoError(t, err)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	require.NoError(t, err)
	return resp, conn
}

// TestHandshake: requests that are not a WebSocket handshake get the
// status RFC 6455 §4.2.1 asks for and no upgrade; valid ones, with header
// tokens in any case and in lists, get 101 with the right accept key, the
// preferred common subprotocol, and refusals by the origin check.
func TestHandshake(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		e := newEcho()
		addr := serve(t, c, e, []websocket.Option{
			websocket.WithSubprotocols("chat.v2", "chat.v1"),
			websocket.WithOriginCheck(func(origin, host []byte) bool { return string(origin) != "http://evil.test" && string(host) == "a" }),
		})
		const key = "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
		const good = "Host: a\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n" + key
		cases := []struct {
			name, req string
			status    int
			header    map[string]string
		}{
			{"valid", "GET / HTTP/1.1\r\n" + good + "\r\n", 101, map[string]string{"Sec-WebSocket-Accept": "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=", "Sec-WebSocket-Protocol": ""}},
			{"token lists and case", "GET / HTTP/1.1\r\nHost: a\r\nUpgrade: WebSocket\r\nConnection: keep-alive, UPGRADE\r\nSec-WebSocket-Version: 13\r\n" + key + "\r\n", 101, nil},
			{"Connection on two lines", "GET / HTTP/1.1\r\nHost: a\r\nUpgrade: websocket\r\nConnection: keep-alive\r\nConnection: upgrade\r\nSec-WebSocket-Version: 13\r\n" + key + "\r\n", 101, nil},
			{"subprotocol", "GET / HTTP/1.1\r\n" + good + "Sec-WebSocket-Protocol: chat.v1, chat.v2\r\n\r\n", 101, map[string]string{"Sec-WebSocket-Protocol": "chat.v2"}},
			{"no common subprotocol", "GET / HTTP/1.1\r\n" + good + "Sec-WebSocket-Protocol: other\r\n\r\n", 101, map[string]string{"Sec-WebSocket-Protocol": ""}},
			{"POST", "POST / HTTP/1.1\r\n" + good + "Content-Length: 0\r\n\r\n", 405, map[string]string{"Allow": "GET"}},
			{"HTTP/1.0", "GET / HTTP/1.0\r\n" + good + "\r\n", 400, nil},
			{"no Upgrade", "GET / HTTP/1.1\r\nHost: a\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n" + key + "\r\n", 400, nil},
			{"no Connection upgrade", "GET / HTTP/1.1\r\nHost: a\r\nUpgrade: websocket\r\nConnection: keep-alive\r\nSec-WebSocket-Version: 13\r\n" + key + "\r\n", 400, nil},
			{"version 8", "GET / HTTP/1.1\r\nHost: a\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 8\r\n" + key + "\r\n", 426, map[string]string{"Sec-WebSocket-Version": "13"}},
			{"no key", "GET / HTTP/1.1\r\nHost: a\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n\r\n", 400, nil},
			{"short key", "GET / HTTP/1.1\r\nHost: a\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: c2hvcnQ=\r\n\r\n", 400, nil},
			{"key not base64", "GET / HTTP/1.1\r\nHost: a\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: !!!!!!!!!!!!!!!!!!!!!!!!\r\n\r\n", 400, nil},
			{"origin refused", "GET / HTTP/1.1\r\n" + good + "Origin: http://evil.test\r\n\r\n", 403, nil},
			{"origin allowed", "GET / HTTP/1.1\r\n" + good + "Origin: http://good.test\r\n\r\n", 101, nil},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				resp, conn := roundTrip(t, addr, tc.req)
				require.Equal(t, tc.status, resp.StatusCode)
				for k, v := range tc.header {
					require.Equal(t, v, resp.Header.Get(k), k)
				}
				if tc.status == 101 {
					require.Equal(t, "websocket", resp.Header.Get("Upgrade"))
					conn.Close()
					require.Equal(t, websocket.CloseAbnormal, e.next(t).code)
				}
			})
		}
		// A fresh key each time is answered with its own accept key.
		k := b64key()
		resp, _ := roundTrip(t, addr, "GET / HTTP/1.1\r\nHost: a\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: "+k+"\r\n\r\n")
		require.Equal(t, 101, resp.StatusCode)
		require.Equal(t, websocket.AcceptKey(k), resp.Header.Get("Sec-WebSocket-Accept"))
	})
}
