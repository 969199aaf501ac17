// Command websocket serves ordinary routes and loop-native WebSockets from
// one http.ServeMux on one port: Upgrade moves a WebSocket onto its loop
// and the handler's goroutine returns.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net/http"
	"os"
	"os/signal"
	"time"

	"github.com/ringloop/ringloop/httpserver"
	"github.com/ringloop/ringloop/loopgroup"
	"github.com/ringloop/ringloop/websocket"
)

// echo runs on the connection's loop: no goroutine per WebSocket.
type echo struct{}

func (echo) OnOpen(c *websocket.Conn) {}
func (echo) OnMessage(c *websocket.Conn, kind websocket.MessageKind, p []byte) {
	_ = c.WriteMessage(kind, p) // queued on the loop; p is copied
}
func (echo) OnClose(c *websocket.Conn, code int, reason string, err error) {}

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "address to listen on")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()

	mux := http.NewServeMux()
	mux.HandleFunc("GET /hello/{name}", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "hello, %s\n", r.PathValue("name"))
	})
	mux.HandleFunc("GET /echo", func(w http.ResponseWriter, r *http.Request) {
		// A cross-origin browser page is refused with 403 unless named:
		// websocket.WithAllowedOrigins("https://app.example").
		if err := websocket.Upgrade(w, r, echo{}); err != nil {
			log.Printf("upgrade: %v", err) // already answered (400, 403, 500)
		}
	})

	loops, err := loopgroup.New()
	if err != nil {
		log.Fatal(err)
	}
	srv, err := httpserver.New(mux)
	if err != nil {
		log.Fatal(err)
	}
	bound, err := srv.Listen(loops, "tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	log.Printf("listening on %s: try ws://%[1]s/echo", bound)

	<-ctx.Done()
	shutdown, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	srv.Shutdown(shutdown) // upgraded WebSockets belong to their loops: Close ends them
	loops.Close()
}
