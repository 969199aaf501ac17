package main

import (
	"bytes"
	"io"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/ringloop/ringloop/internal/testenv"
)

func TestMain(m *testing.M) {
	testenv.RunMain(main)
	os.Exit(m.Run())
}

// TestMixedRoutes runs the command: an ordinary route and a WebSocket echo
// answer on one port (gorilla as the client), and a cross-origin upgrade is
// refused with 403.
func TestMixedRoutes(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		p := testenv.StartMain(t, c, "-addr", "127.0.0.1:0")
		cl := &http.Client{Timeout: 30 * time.Second}
		defer cl.CloseIdleConnections()
		res, err := cl.Get("http://" + p.Addr + "/hello/gopher")
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(res.Body)
		res.Body.Close()
		if err != nil || res.StatusCode != 200 || string(b) != "hello, gopher\n" {
			t.Fatalf("GET: %d %q %v", res.StatusCode, b, err)
		}

		d := websocket.Dialer{HandshakeTimeout: 30 * time.Second}
		ws, _, err := d.Dial("ws://"+p.Addr+"/echo", http.Header{"Origin": {"http://" + p.Addr}})
		if err != nil {
			t.Fatal(err)
		}
		msg := bytes.Repeat([]byte("ringloop "), 1000)
		if err := ws.WriteMessage(websocket.BinaryMessage, msg); err != nil {
			t.Fatal(err)
		}
		_ = ws.SetReadDeadline(time.Now().Add(30 * time.Second))
		kind, got, err := ws.ReadMessage()
		if err != nil || kind != websocket.BinaryMessage || !bytes.Equal(got, msg) {
			t.Fatalf("echo: kind %d, %d bytes, %v", kind, len(got), err)
		}
		ws.Close()

		_, res, err = d.Dial("ws://"+p.Addr+"/echo", http.Header{"Origin": {"http://evil.example"}})
		if err == nil || res == nil || res.StatusCode != http.StatusForbidden {
			code := 0
			if res != nil {
				code = res.StatusCode
			}
			t.Fatalf("cross-origin upgrade: status %d, err %v; want 403", code, err)
		}
		p.Interrupt(t)
	})
}
