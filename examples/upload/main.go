// Command upload takes uploads of any size on the fast API without holding
// them in memory: POST /upload streams the request body into a SHA-256 on
// a goroutine and answers its length and digest; every other request gets
// its body whole, as a plain fast handler would.
//
//	curl -T big.iso http://127.0.0.1:8080/upload
//	→ {"bytes":4700000000,"sha256":"…"}
//
// The handler runs on the loop when the head arrives (StreamBody chose to
// stream), defers its answer, and reads the body from a goroutine; the loop
// receives it through a 64 KiB window and stops reading the connection
// while the window is full, so a slow disk or hash slows the client down
// rather than growing the server.
package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"io"
	"log"
	"net/http"
	"os"
	"os/signal"
	"strconv"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/httpserver"
)

// service streams the bodies of POST /upload.
type service struct{}

// StreamBody is asked on the loop once a request's head is read.
func (service) StreamBody(r *httpserver.Request) bool {
	return r.Method() == "POST" && string(r.Path()) == "/upload"
}

func (service) ServeFast(w *httpserver.Response, r *httpserver.Request) {
	body := r.BodyStream()
	if body == nil { // not streamed: the whole body is here
		w.AddHeader("Content-Type", "text/plain; charset=utf-8")
		_, _ = w.WriteString("POST a body to /upload; this request had " + strconv.Itoa(len(r.Body())) + " bytes\n")
		return
	}
	d := w.Defer() // answered from the goroutine below
	go func() {
		h := sha256.New()
		n, err := io.Copy(h, body)
		if err != nil {
			d.SetStatus(http.StatusBadRequest)
			_, _ = d.WriteString(err.Error() + "\n")
			_ = d.Finish()
			return
		}
		d.AddHeader("Content-Type", "application/json")
		out, _ := json.Marshal(map[string]any{"bytes": n, "sha256": hex.EncodeToString(h.Sum(nil))})
		_, _ = d.Write(append(out, '\n'))
		_ = d.Finish()
	}()
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
	srv, err := httpserver.NewFast(service{})
	if err != nil {
		log.Fatal(err)
	}
	a, err := srv.Listen(loop, "tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	log.Printf("listening on %s (%s)", a, loop.Backend().Name)

	<-ctx.Done()
	if err := srv.Shutdown(context.Background()); err != nil {
		log.Print(err)
	}
	if err := loop.Close(); err != nil {
		log.Fatal(err)
	}
}
