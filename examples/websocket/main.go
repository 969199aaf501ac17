// Command websocket serves WebSocket endpoints on one loop, with no
// goroutine per connection:
//
//	go run ./examples/websocket -addr 127.0.0.1:8080
//
// /echo sends every message back; /chat relays every message to everyone
// connected to /chat. Both run on the one loop, so the chat room is a plain
// map with no lock. SIGINT stops the server.
package main

import (
	"context"
	"flag"
	"log"
	"os"
	"os/signal"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/httpserver"
	"github.com/ringloop/ringloop/websocket"
)

// echo answers every message with itself.
type echo struct{}

func (echo) OnOpen(c *websocket.Conn) {}
func (echo) OnMessage(c *websocket.Conn, kind websocket.MessageKind, p []byte) {
	_ = c.WriteMessage(kind, p) // p is valid during the call: it is copied out
}
func (echo) OnClose(c *websocket.Conn, code int, reason string, err error) {}

// room relays each message to every member. A member that does not read
// is dropped (websocket.CloseSlow) rather than held in memory.
type room struct{ members map[*websocket.Conn]struct{} }

func (r *room) OnOpen(c *websocket.Conn) { r.members[c] = struct{}{} }
func (r *room) OnMessage(c *websocket.Conn, kind websocket.MessageKind, p []byte) {
	for m := range r.members {
		_ = m.WriteMessage(kind, p)
	}
}
func (r *room) OnClose(c *websocket.Conn, code int, reason string, err error) {
	delete(r.members, c)
}

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "address to listen on")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()

	loop, err := engine.New()
	if err != nil {
		log.Fatal(err)
	}
	chat := &room{members: map[*websocket.Conn]struct{}{}}
	srv, err := httpserver.New(httpserver.HandlerFunc(func(w *httpserver.Response, r *httpserver.Request) {
		switch string(r.Path()) {
		case "/echo":
			_ = websocket.Upgrade(w, r, echo{}) // on error it answered 4xx
		case "/chat":
			_ = websocket.Upgrade(w, r, chat, websocket.WithSlowConsumer(websocket.CloseSlow))
		default:
			w.SetStatus(404)
			_, _ = w.WriteString("try /echo or /chat\n")
		}
	}))
	if err != nil {
		log.Fatal(err)
	}
	a, err := srv.Listen(loop, "tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	log.Printf("listening on %s (%s)", a, loop.Backend().Name)

	<-ctx.Done()
	_ = srv.Close()
	if err := loop.Close(); err != nil {
		log.Fatal(err)
	}
}
