// Command http serves an http.Handler on a group of ringloop loops.
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
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "address to listen on")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt) // before serving: Ctrl-C shuts down
	defer stop()

	mux := http.NewServeMux()
	mux.HandleFunc("GET /hello/{name}", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "hello, %s\n", r.PathValue("name"))
	})

	loops, err := loopgroup.New() // one loop per GOMAXPROCS
	if err != nil {
		log.Fatal(err)
	}
	srv, err := httpserver.New(mux) // each request on its own goroutine, as net/http
	if err != nil {
		log.Fatal(err)
	}
	bound, err := srv.Listen(loops, "tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	log.Printf("listening on %s: try http://%[1]s/hello/gopher", bound)

	<-ctx.Done()
	shutdown, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	srv.Shutdown(shutdown) // stop accepting, finish the requests in flight
	loops.Close()
}
