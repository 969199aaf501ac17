package websocket_test

import (
	"bufio"
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/httpserver"
	"github.com/ringloop/ringloop/internal/testenv"
	"github.com/ringloop/ringloop/looptls"
	"github.com/ringloop/ringloop/tasks"
	"github.com/ringloop/ringloop/websocket"
)

// BenchmarkEcho128: one client sends a 128-byte masked binary frame and
// reads the echo, round trip after round trip, on the default backend;
// allocs/op covers the server's parse, OnMessage and write (the client
// reuses its buffers). The echo's header is 4 bytes (128 takes the 16-bit
// length): reading 2 would leave 2 bytes a round behind, and after 65
// rounds the client would run ahead of the server, timing a pipeline
// instead of round trips.
func BenchmarkEcho128(b *testing.B) { benchEcho(b, newEcho(), 4+128) }

// benchEcho bounces a 128-byte frame off h, reading back bytes of answer.
func benchEcho(b *testing.B, h websocket.Handler, back int) []byte {
	loop, err := engine.New()
	if err != nil {
		b.Fatal(err)
	}
	defer loop.Close()
	s, err := httpserver.NewFast(httpserver.HandlerFunc(func(w *httpserver.Response, r *httpserver.Request) {
		_ = websocket.UpgradeFast(w, r, h)
	}))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	a, err := s.Listen(loop, "tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	conn, err := net.Dial("tcp", a.String())
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Minute))
	_, _ = io.WriteString(conn, "GET / HTTP/1.1\r\nHost: a\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"+
		"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
	r := bufio.NewReader(conn)
	resp, err := http.ReadResponse(r, nil)
	if err != nil || resp.StatusCode != 101 {
		b.Fatal(resp, err)
	}
	msg := frame(finBinary, make([]byte, 128), true)
	answer := make([]byte, back)
	b.ReportAllocs()
	b.SetBytes(128)
	b.ResetTimer()
	for range b.N {
		if _, err := conn.Write(msg); err != nil {
			b.Fatal(err)
		}
		if _, err := io.ReadFull(r, answer); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	return answer
}

// fragEcho echoes each message in two fragments through NextWriter.
type fragEcho struct{ *echo }

func (fragEcho) OnMessage(c *websocket.Conn, kind websocket.MessageKind, p []byte) {
	w, err := c.NextWriter(kind)
	if err != nil {
		return
	}
	_, _ = w.Write(p[:len(p)/2])
	_, _ = w.Write(p[len(p)/2:])
	_ = w.Close()
}

// BenchmarkEchoFragmented128 is BenchmarkEcho128 with the echo sent by
// NextWriter in two 64-byte fragments and an empty final frame: allocs/op
// shows a fragmented message costs no allocation either.
func BenchmarkEchoFragmented128(b *testing.B) {
	back := benchEcho(b, fragEcho{newEcho()}, 2+64+2+64+2)
	if back[0] != 0x02 || back[66] != 0x00 || back[132] != 0x80 {
		b.Fatalf("frames % x", back)
	}
}

// pinger sends its message again each time the echo comes back, on the
// loop, until left round trips are done.
type pinger struct {
	left int
	msg  []byte
	done chan struct{}
}

func (p *pinger) OnOpen(c *websocket.Conn) {}
func (p *pinger) OnMessage(c *websocket.Conn, kind websocket.MessageKind, payload []byte) {
	if p.left--; p.left <= 0 {
		close(p.done)
		return
	}
	_ = c.WriteMessage(websocket.Binary, p.msg)
}
func (p *pinger) OnClose(c *websocket.Conn, code int, reason string, err error) {}

// BenchmarkDialEcho128: Dial's client and the server, each on a loop of
// its own, bounce a 128-byte binary message; allocs/op covers both sides
// (the client masks each frame with a fresh key).
func BenchmarkDialEcho128(b *testing.B) { benchDialEcho(b, false) }

// BenchmarkDialEchoTLS128 is BenchmarkDialEcho128 over wss (EngineHandler
// behind looptls.Server, Dial wss://): allocs/op adds crypto/tls's own on
// both sides.
func BenchmarkDialEchoTLS128(b *testing.B) { benchDialEcho(b, true) }

func benchDialEcho(b *testing.B, secure bool) {
	srvLoop, err := engine.New()
	if err != nil {
		b.Fatal(err)
	}
	defer srvLoop.Close()
	cliLoop, err := engine.New()
	if err != nil {
		b.Fatal(err)
	}
	defer cliLoop.Close()
	var h engine.Handler
	var opts []websocket.Option
	url := "ws://"
	if secure {
		pki := testenv.NewPKI(b)
		wh, err := websocket.EngineHandler(newEcho())
		if err != nil {
			b.Fatal(err)
		}
		h = looptls.Server(wh, &tls.Config{Certificates: []tls.Certificate{pki.Leaf(b, "server", "127.0.0.1")}})
		opts = append(opts, websocket.WithDialConfig(websocket.DialConfig{TLSConfig: &tls.Config{RootCAs: pki.Pool}}))
		url = "wss://"
	} else if h, err = websocket.EngineHandler(newEcho()); err != nil {
		b.Fatal(err)
	}
	ln, err := engine.Listen(srvLoop, "tcp", "127.0.0.1:0", h)
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	p := &pinger{left: b.N, msg: make([]byte, 128), done: make(chan struct{})}
	ws, err := websocket.Dial(context.Background(), cliLoop, url+ln.Addr().String()+"/", p, opts...)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.SetBytes(128)
	b.ResetTimer()
	if err := cliLoop.Execute(tasks.Func(func() { _ = ws.WriteMessage(websocket.Binary, p.msg) })); err != nil {
		b.Fatal(err)
	}
	<-p.done
	b.StopTimer()
	_ = ws.Close(websocket.CloseNormal, "")
}
