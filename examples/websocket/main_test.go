package main

import (
	"errors"
	"os"
	"testing"
	"time"

	gws "github.com/gorilla/websocket"

	"github.com/ringloop/ringloop/internal/testenv"
)

func TestMain(m *testing.M) {
	testenv.RunMain(main)
	os.Exit(m.Run())
}

func dial(t *testing.T, url string) *gws.Conn {
	t.Helper()
	d := gws.Dialer{HandshakeTimeout: 30 * time.Second}
	ws, _, err := d.Dial(url, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	_ = ws.SetReadDeadline(time.Now().Add(60 * time.Second))
	return ws
}

func read(t *testing.T, ws *gws.Conn) string {
	t.Helper()
	_, p, err := ws.ReadMessage()
	if err != nil {
		t.Fatal(err)
	}
	return string(p)
}

// TestWebSocket runs the command: /echo answers, /chat relays a message
// to both members (the second joins once the first is in, proven by a
// message both see), a close is answered, and SIGINT stops it with exit 0.
func TestWebSocket(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		p := testenv.StartMain(t, c, "-addr", "127.0.0.1:0")
		base := "ws://" + p.Addr

		e := dial(t, base+"/echo")
		if err := e.WriteMessage(gws.TextMessage, []byte("hello")); err != nil {
			t.Fatal(err)
		}
		if got := read(t, e); got != "hello" {
			t.Fatalf("echo: %q", got)
		}

		a := dial(t, base+"/chat")
		if err := a.WriteMessage(gws.TextMessage, []byte("a is here")); err != nil {
			t.Fatal(err)
		}
		if got := read(t, a); got != "a is here" {
			t.Fatalf("a's own message: %q", got)
		}
		b := dial(t, base+"/chat")
		if err := b.WriteMessage(gws.TextMessage, []byte("hi from b")); err != nil {
			t.Fatal(err)
		}
		for _, ws := range []*gws.Conn{a, b} {
			if got := read(t, ws); got != "hi from b" {
				t.Fatalf("relayed: %q", got)
			}
		}

		if err := e.WriteMessage(gws.CloseMessage, gws.FormatCloseMessage(gws.CloseNormalClosure, "")); err != nil {
			t.Fatal(err)
		}
		_, _, err := e.ReadMessage()
		var ce *gws.CloseError
		if !errors.As(err, &ce) || ce.Code != gws.CloseNormalClosure {
			t.Fatalf("after close: %v", err)
		}
		p.Interrupt(t)
	})
}
