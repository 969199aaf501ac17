package main

import (
	"crypto/tls"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	gws "github.com/gorilla/websocket"

	"github.com/ringloop/ringloop/internal/testenv"
)

func TestMain(m *testing.M) {
	testenv.RunMain(main)
	os.Exit(m.Run())
}

func dial(t *testing.T, url string, cfg *tls.Config) *gws.Conn {
	t.Helper()
	d := gws.Dialer{HandshakeTimeout: 30 * time.Second, TLSClientConfig: cfg}
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

// TestWebSocket runs the command: /echo answers; /lines streams 5000
// lines as one message; /chat welcomes each
// member naming its loop, and two members on different loops each get
// both their messages (each in the hub before the other speaks, as the
// welcome proves); a close is answered, and SIGINT stops it with exit 0.
func TestWebSocket(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		p := testenv.StartMain(t, c, "-addr", "127.0.0.1:0", "-loops", "2")
		exercise(t, p, "ws://"+p.Addr, nil)
	})
}

// TestWebSocketTLS runs the command with -cert and -key: the same over
// wss, the client trusting the test CA.
func TestWebSocketTLS(t *testing.T) {
	pki := testenv.NewPKI(t)
	cert, key := pki.LeafFiles(t, "localhost", "localhost", "127.0.0.1")
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		p := testenv.StartMain(t, c, "-addr", "127.0.0.1:0", "-loops", "2", "-cert", cert, "-key", key)
		exercise(t, p, "wss://"+p.Addr, &tls.Config{RootCAs: pki.Pool})
	})
}

// exercise is TestWebSocket's exchange with the command at base.
func exercise(t *testing.T, p *testenv.MainProcess, base string, cfg *tls.Config) {
	t.Helper()
	open := func(url string) *gws.Conn { return dial(t, url, cfg) }

	e := open(base + "/echo")
	if err := e.WriteMessage(gws.TextMessage, []byte("hello")); err != nil {
		t.Fatal(err)
	}
	if got := read(t, e); got != "hello" {
		t.Fatalf("echo: %q", got)
	}

	l := open(base + "/lines")
	if err := l.WriteMessage(gws.TextMessage, []byte("5000")); err != nil {
		t.Fatal(err)
	}
	got := read(t, l)
	if n := strings.Count(got, "\n"); n != 5000 || !strings.HasPrefix(got, "line 1\n") || !strings.HasSuffix(got, "line 5000\n") {
		t.Fatalf("lines: %d lines, %q...%q", n, got[:min(20, len(got))], got[max(0, len(got)-20):])
	}

	a := open(base + "/chat")
	aLoop := read(t, a)
	if !strings.HasPrefix(aLoop, "welcome, loop ") {
		t.Fatalf("a's welcome: %q", aLoop)
	}
	// Connections go to the loops in turn: one of the next few is on
	// the other loop.
	var b *gws.Conn
	for range 4 {
		ws := open(base + "/chat")
		if w := read(t, ws); w != aLoop {
			b = ws
			break
		}
		ws.Close()
	}
	if b == nil {
		t.Fatal("no chat member on a second loop")
	}
	for _, m := range []struct {
		from *gws.Conn
		text string
	}{{a, "hi from a"}, {b, "hi from b"}} {
		if err := m.from.WriteMessage(gws.TextMessage, []byte(m.text)); err != nil {
			t.Fatal(err)
		}
		for _, ws := range []*gws.Conn{a, b} {
			if got := read(t, ws); got != m.text {
				t.Fatalf("relayed: %q, want %q", got, m.text)
			}
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
}
