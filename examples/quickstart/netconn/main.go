// Command netconn runs net/http, unchanged, on a net.Listener served by
// ringloop's loops.
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

	"github.com/ringloop/ringloop/loopgroup"
	"github.com/ringloop/ringloop/netconn"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "address to listen on")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt) // before serving: Ctrl-C shuts down
	defer stop()

	loops, err := loopgroup.New()
	if err != nil {
		log.Fatal(err)
	}
	ln, err := netconn.Listen(loops, "tcp", *addr) // a net.Listener
	if err != nil {
		log.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintln(w, "hello from net/http on ringloop")
	})}
	go srv.Serve(ln) // or tls.NewListener(ln, cfg), grpc's Serve(ln), anything taking a net.Listener
	log.Printf("listening on %s", ln.Addr())

	<-ctx.Done()
	shutdown, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	srv.Shutdown(shutdown)
	loops.Close()
}
