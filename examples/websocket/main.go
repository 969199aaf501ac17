// Command websocket serves WebSocket endpoints on a group of loops, with no
// goroutine per connection:
//
//	go run ./examples/websocket -addr 127.0.0.1:8080 -loops 2
//
// /echo sends every message back; /chat is a room across every loop: a
// member is first told which loop serves it ("welcome, loop NAME"), then
// every message any member sends goes to all of them, in one order, through
// a websocket.Hub (one task per loop per message, whatever the number of
// members; a burst pauses the senders rather than lose messages). /lines answers a number n with one text message of n
// numbered lines, streamed in 4 KiB fragments (websocket's NextWriter)
// rather than built whole. SIGINT stops the server. Given -cert and -key (PEM files) it
// serves wss instead, TLS run by the loops too (no goroutine per
// connection either):
//
//	go run ./examples/websocket -addr 127.0.0.1:8443 -cert cert.pem -key key.pem
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"log"
	"net"
	"os"
	"os/signal"
	"strconv"

	"github.com/ringloop/ringloop/httpserver"
	"github.com/ringloop/ringloop/loopgroup"
	"github.com/ringloop/ringloop/websocket"
)

// echo answers every message with itself.
type echo struct{}

func (echo) OnOpen(c *websocket.Conn) {}
func (echo) OnMessage(c *websocket.Conn, kind websocket.MessageKind, p []byte) {
	_ = c.WriteMessage(kind, p) // p is valid during the call: it is copied out
}
func (echo) OnClose(c *websocket.Conn, code int, reason string, err error) {}

// lines answers n with one message of n lines, written as it is produced:
// a bufio.Writer over the message's writer sends a frame per 4 KiB.
type lines struct{}

// maxLines bounds what one request may ask for.
const maxLines = 1 << 20

func (lines) OnOpen(c *websocket.Conn) {}
func (lines) OnMessage(c *websocket.Conn, kind websocket.MessageKind, p []byte) {
	n, err := strconv.Atoi(string(p))
	if err != nil || n < 0 || n > maxLines {
		_ = c.WriteMessage(websocket.Text, []byte("send a number of lines, 0 to 1048576"))
		return
	}
	w, err := c.NextWriter(websocket.Text)
	if err != nil {
		return // closing
	}
	bw := bufio.NewWriterSize(w, 4<<10)
	for i := range n {
		fmt.Fprintf(bw, "line %d\n", i+1)
	}
	_ = bw.Flush()
	_ = w.Close()
}
func (lines) OnClose(c *websocket.Conn, code int, reason string, err error) {}

// room relays each message to every member, on whichever loop it is, all
// of them: when members fall behind (a burst), the hub pauses the reads of
// the members that send until they catch up, rather than drop anything. A
// member that stops reading holds the room for at most the hub's
// slow-consumer timeout (Hub.SlowTimeout, 5 s by default), then is dropped
// (websocket.CloseSlow) rather than held in memory; a member that closes
// leaves the hub by itself.
type room struct{ hub *websocket.Hub }

func (r room) OnOpen(c *websocket.Conn) {
	r.hub.Add(c)
	_ = c.WriteMessage(websocket.Text, []byte("welcome, loop "+c.Conn().Loop().Name()))
}
func (r room) OnMessage(c *websocket.Conn, kind websocket.MessageKind, p []byte) {
	// From a member's OnMessage, Broadcast is never refused for being
	// behind (the sender waits instead): it fails only when a loop is
	// shutting down, or its task ring is full.
	if err := r.hub.Broadcast(kind, p); err != nil {
		log.Printf("chat: %v", err)
	}
}
func (r room) OnClose(c *websocket.Conn, code int, reason string, err error) {}

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "address to listen on")
	n := flag.Int("loops", 2, "event loops serving the connections")
	cert := flag.String("cert", "", "PEM certificate (chain) file: serve wss (with -key)")
	key := flag.String("key", "", "PEM private key file of -cert")
	flag.Parse()
	if (*cert == "") != (*key == "") {
		log.Fatal("websocket: -cert and -key go together")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()

	loops, err := loopgroup.New(loopgroup.WithLoops(*n), loopgroup.WithName("ws"))
	if err != nil {
		log.Fatal(err)
	}
	chat := room{new(websocket.Hub)}
	srv, err := httpserver.NewFast(httpserver.HandlerFunc(func(w *httpserver.Response, r *httpserver.Request) {
		switch string(r.Path()) {
		case "/echo":
			_ = websocket.UpgradeFast(w, r, echo{}) // on error it answered 4xx
		case "/lines":
			_ = websocket.UpgradeFast(w, r, lines{})
		case "/chat":
			_ = websocket.UpgradeFast(w, r, chat, websocket.WithSlowConsumer(websocket.CloseSlow))
		default:
			w.SetStatus(404)
			_, _ = w.WriteString("try /echo, /lines or /chat\n")
		}
	}))
	if err != nil {
		log.Fatal(err)
	}
	scheme := "ws"
	var a net.Addr
	if *cert != "" {
		scheme = "wss"
		a, err = srv.ListenTLS(loops, "tcp", *addr, *cert, *key)
	} else {
		a, err = srv.Listen(loops, "tcp", *addr)
	}
	if err != nil {
		log.Fatal(err)
	}
	log.Printf("listening on %s (%d loops, %s, %s)", a, len(loops.Loops()), loops.Loops()[0].Backend().Name, scheme)

	<-ctx.Done()
	_ = srv.Close()
	if err := loops.Close(); err != nil {
		log.Fatal(err)
	}
}
