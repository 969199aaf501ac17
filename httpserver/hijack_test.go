package httpserver_test

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/require"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/httpserver"
	"github.com/ringloop/ringloop/internal/testenv"
)

// wsEcho upgrades with gorilla/websocket (through http.Hijacker) and echoes
// every message until the client closes.
func wsEcho(done *sync.WaitGroup) http.HandlerFunc {
	up := websocket.Upgrader{}
	return func(w http.ResponseWriter, r *http.Request) {
		done.Add(1)
		defer done.Done()
		ws, err := up.Upgrade(w, r, nil)
		if err != nil {
			return // the upgrader answered with an error status
		}
		defer ws.Close()
		for {
			kind, msg, err := ws.ReadMessage()
			if err != nil {
				return
			}
			if err := ws.WriteMessage(kind, msg); err != nil {
				return
			}
		}
	}
}

// echoRounds sends text and binary messages from 0 bytes to 1 MiB over ws
// and checks each comes back whole.
func echoRounds(t *testing.T, ws *websocket.Conn) {
	t.Helper()
	_ = ws.SetReadDeadline(time.Now().Add(60 * time.Second))
	for i, n := range []int{0, 1, 125, 126, 65535, 65536, 1 << 20} {
		kind := websocket.BinaryMessage
		if i%2 == 0 {
			kind = websocket.TextMessage
		}
		msg := bytes.Repeat([]byte{'a' + byte(i)}, n)
		require.NoError(t, ws.WriteMessage(kind, msg))
		gotKind, got, err := ws.ReadMessage()
		require.NoError(t, err)
		require.Equal(t, kind, gotKind)
		require.True(t, bytes.Equal(msg, got), "message %d: %d bytes back, want %d", i, len(got), n)
	}
}

// TestWebSocketOverHijack: gorilla/websocket's client and server talk over
// a connection the adapter hands over with Hijack: text and binary
// messages from 0 bytes to 1 MiB come back whole and in order, and after
// the close the server has no connection left.
func TestWebSocketOverHijack(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		var handlers sync.WaitGroup
		s, err := httpserver.New(wsEcho(&handlers))
		require.NoError(t, err)
		base := onLoop(t, c, s)
		d := websocket.Dialer{HandshakeTimeout: 30 * time.Second}
		ws, resp, err := d.Dial("ws"+strings.TrimPrefix(base, "http")+"/echo", nil)
		require.NoError(t, err)
		require.Equal(t, http.StatusSwitchingProtocols, resp.StatusCode)
		echoRounds(t, ws)
		require.Zero(t, s.Metrics().Connections, "a hijacked connection is no longer the server's")
		require.NoError(t, ws.WriteMessage(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, "")))
		_, _, err = ws.ReadMessage()
		var ce *websocket.CloseError
		require.True(t, errors.As(err, &ce), "read after close: %v", err)
		ws.Close()
		handlers.Wait()
	})
}

// TestHijackPendingBytes: bytes the client sent right behind the request
// (here in the same write) are the first the hijacked connection reads;
// the connection then carries raw bytes both ways, and the server answers
// nothing after Hijack on its own. Hijack twice fails; WithInlineHTTP
// refuses it with an error rather than deadlocking its loop.
func TestHijackPendingBytes(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		second := make(chan error, 1)
		s, err := httpserver.New(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			conn, rw, err := w.(http.Hijacker).Hijack()
			if err != nil {
				http.Error(w, err.Error(), 500)
				return
			}
			defer conn.Close()
			_, _, err = w.(http.Hijacker).Hijack()
			second <- err
			if rw.Reader.Buffered() != 0 {
				return
			}
			_ = conn.SetDeadline(time.Now().Add(60 * time.Second))
			io.WriteString(conn, "HTTP/1.1 200 Connection established\r\n\r\n")
			io.Copy(conn, conn) // echo until the client closes its side
		}))
		require.NoError(t, err)
		base := onLoop(t, c, s)
		conn := dial(t, base)
		_, err = io.WriteString(conn, "CONNECT example.test:443 HTTP/1.1\r\nHost: example.test:443\r\n\r\nearly bytes")
		require.NoError(t, err)
		r := bufio.NewReader(conn)
		status, err := r.ReadString('\n')
		require.NoError(t, err)
		require.Equal(t, "HTTP/1.1 200 Connection established\r\n", status)
		blank, err := r.ReadString('\n')
		require.NoError(t, err)
		require.Equal(t, "\r\n", blank)
		got := make([]byte, len("early bytes"))
		_, err = io.ReadFull(r, got)
		require.NoError(t, err)
		require.Equal(t, "early bytes", string(got))
		require.ErrorIs(t, <-second, http.ErrHijacked)
		_, err = io.WriteString(conn, "later")
		require.NoError(t, err)
		got = make([]byte, 5)
		_, err = io.ReadFull(r, got)
		require.NoError(t, err)
		require.Equal(t, "later", string(got))
		require.NoError(t, conn.(*net.TCPConn).CloseWrite())
		rest, err := io.ReadAll(r)
		require.NoError(t, err)
		require.Empty(t, rest)

		inline, err := httpserver.New(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if _, _, err := w.(http.Hijacker).Hijack(); err != nil {
				http.Error(w, err.Error(), http.StatusNotImplemented)
			}
		}), httpserver.WithInlineHTTP())
		require.NoError(t, err)
		resp, err := http.Get(onLoop(t, c, inline))
		require.NoError(t, err)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.Equal(t, http.StatusNotImplemented, resp.StatusCode)
		require.Contains(t, string(body), "WithInlineHTTP")
	})
}

// TestHijackAfterClientFIN: a client that sends its request, bytes behind
// it and then shuts down its side before the handler hijacks: the hijacked
// connection reads those bytes, then EOF (whether the FIN reached the
// server before or after Hijack), and can still answer.
func TestHijackAfterClientFIN(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		finSent := make(chan struct{})
		s, err := httpserver.New(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			<-finSent
			conn, _, err := w.(http.Hijacker).Hijack()
			if err != nil {
				return
			}
			defer conn.Close()
			_ = conn.SetDeadline(time.Now().Add(60 * time.Second))
			got, err := io.ReadAll(conn)
			if err != nil {
				io.WriteString(conn, "read error: "+err.Error())
				return
			}
			io.WriteString(conn, "got "+string(got))
		}))
		require.NoError(t, err)
		base := onLoop(t, c, s)
		conn := dial(t, base)
		_, err = io.WriteString(conn, "GET /raw HTTP/1.1\r\nHost: a\r\n\r\ntail")
		require.NoError(t, err)
		require.NoError(t, conn.(*net.TCPConn).CloseWrite())
		close(finSent)
		answer, err := io.ReadAll(conn)
		require.NoError(t, err)
		require.Equal(t, "got tail", string(answer))
	})
}

// shoutProto is an on-loop protocol after an upgrade: it answers every
// byte received in upper case, and records how it ended.
type shoutProto struct{ closed chan error }

func (p *shoutProto) OnOpen(c *engine.Conn) {
	if c.Value() != nil { // the server's own state stays with the server
		c.Write([]byte("value kept\n"))
	}
	c.Write([]byte("hello\n"))
}
func (p *shoutProto) OnData(c *engine.Conn, b []byte) {
	c.Write(bytes.ToUpper(b))
}
func (p *shoutProto) OnClose(c *engine.Conn, err error) { p.closed <- err }

// TestFastUpgrade: the fast API answers 101 and hands the connection to an
// engine.Handler on the same loop: the client reads the 101 with the
// handler's headers, then the new protocol, which sees first the bytes the
// client sent behind the request (pipelined in the same write), then later
// ones. The server counts the connection no more; the handler's OnClose
// sees the client's close, and the connection comes without the server's
// value. Upgrade refuses HTTP/1.0.
func TestFastUpgrade(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		proto := &shoutProto{closed: make(chan error, 1)}
		s, err := httpserver.NewFast(httpserver.HandlerFunc(func(w *httpserver.Response, r *httpserver.Request) {
			if string(r.Header("Upgrade")) != "shout" {
				w.SetStatus(http.StatusUpgradeRequired)
				return
			}
			w.AddHeader("X-Proto", "v1")
			if err := w.Upgrade("shout", proto); err != nil {
				w.SetStatus(http.StatusHTTPVersionNotSupported)
				w.WriteString(err.Error())
			}
		}))
		require.NoError(t, err)
		base := onLoop(t, c, s)
		conn := dial(t, base)
		_, err = io.WriteString(conn, "GET /up HTTP/1.1\r\nHost: a\r\nConnection: Upgrade\r\nUpgrade: shout\r\n\r\nearly")
		require.NoError(t, err)
		r := bufio.NewReader(conn)
		resp, err := http.ReadResponse(r, nil)
		require.NoError(t, err)
		require.Equal(t, http.StatusSwitchingProtocols, resp.StatusCode)
		require.Equal(t, "shout", resp.Header.Get("Upgrade"))
		require.Equal(t, "Upgrade", resp.Header.Get("Connection"))
		require.Equal(t, "v1", resp.Header.Get("X-Proto"))
		want := "hello\nEARLY"
		got := make([]byte, len(want))
		_, err = io.ReadFull(r, got)
		require.NoError(t, err)
		require.Equal(t, want, string(got))
		require.Zero(t, s.Metrics().Connections)
		_, err = io.WriteString(conn, "later")
		require.NoError(t, err)
		got = make([]byte, 5)
		_, err = io.ReadFull(r, got)
		require.NoError(t, err)
		require.Equal(t, "LATER", string(got))
		require.NoError(t, conn.Close())
		select {
		case err := <-proto.closed:
			require.ErrorIs(t, err, io.EOF)
		case <-time.After(30 * time.Second):
			t.Fatal("the upgraded protocol's OnClose did not run")
		}

		old := dial(t, base)
		_, err = io.WriteString(old, "GET /up HTTP/1.0\r\nUpgrade: shout\r\n\r\n")
		require.NoError(t, err)
		resp, err = http.ReadResponse(bufio.NewReader(old), nil)
		require.NoError(t, err)
		require.Equal(t, http.StatusHTTPVersionNotSupported, resp.StatusCode)
	})
}
