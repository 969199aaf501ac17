// Command httpserver is a small JSON service on ringloop's HTTP server: one
// loop per GOMAXPROCS, each with its own SO_REUSEPORT listener, handlers on
// the fast API, graceful shutdown on SIGINT or SIGTERM. Given -cert and
// -key (PEM files) it serves HTTPS instead, with TLS run by the loops and
// HTTP/2 offered by ALPN; given -h2c it serves cleartext HTTP/2 with prior
// knowledge beside HTTP/1.1 on the plain port.
//
//	go run ./examples/httpserver -addr 127.0.0.1:8080
//	curl localhost:8080/                      # text
//	curl localhost:8080/status                # JSON: requests served, loop, time
//	curl -d '{"name":"gopher"}' localhost:8080/greet   # JSON in, JSON out
//
//	go run ./examples/httpserver -addr 127.0.0.1:8443 -cert cert.pem -key key.pem
//	curl --cacert ca.pem https://localhost:8443/    # HTTP/2 (curl -v: "ALPN: server accepted h2")
//
//	go run ./examples/httpserver -addr 127.0.0.1:8080 -h2c
//	curl --http2-prior-knowledge localhost:8080/    # HTTP/2 in clear
//	curl localhost:8080/                            # HTTP/1.1, same port
//
// It logs "listening on ADDR (backend NAME, http|https[, h2c])" once
// serving.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"log"
	"net"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/ringloop/ringloop/httpserver"
	"github.com/ringloop/ringloop/loopgroup"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "TCP address to listen on")
	cert := flag.String("cert", "", "PEM certificate (chain) file: serve HTTPS (with -key)")
	key := flag.String("key", "", "PEM private key file of -cert")
	h2c := flag.Bool("h2c", false, "serve cleartext HTTP/2 with prior knowledge beside HTTP/1.1 (without -cert)")
	flag.Parse()
	if (*cert == "") != (*key == "") {
		log.Fatal("httpserver: -cert and -key go together")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if *h2c && *cert != "" {
		log.Fatal("httpserver: -h2c is for the plain port (HTTPS offers HTTP/2 by ALPN)")
	}
	err := serve(ctx, *addr, *cert, *key, *h2c, func(a net.Addr, backend string) {
		scheme := "http"
		if *cert != "" {
			scheme = "https"
		}
		if *h2c {
			scheme += ", h2c"
		}
		log.Printf("listening on %s (backend %s, %s)", a, backend, scheme)
	})
	if err != nil {
		log.Fatal("httpserver: ", err)
	}
}

// serve runs the service until ctx ends, then shuts down gracefully: stop
// accepting, finish the requests in flight, close idle connections (an
// HTTP/2 one gets GOAWAY and closes once its streams are done). With
// certFile and keyFile it serves HTTPS; with h2c, cleartext HTTP/2 too.
func serve(ctx context.Context, addr, certFile, keyFile string, h2c bool, ready func(net.Addr, string)) error {
	loops, err := loopgroup.New(loopgroup.WithName("http"))
	if err != nil {
		return err
	}
	defer loops.Close()
	opts := []httpserver.Option{httpserver.WithTimeouts(httpserver.Timeouts{ReadHeader: 5 * time.Second, Read: 30 * time.Second, Idle: time.Minute})}
	if h2c {
		opts = append(opts, httpserver.WithH2C())
	}
	srv, err := httpserver.NewFast(&service{}, opts...)
	if err != nil {
		return err
	}
	var a net.Addr
	if certFile != "" {
		a, err = srv.ListenTLS(loops, "tcp", addr, certFile, keyFile, loopgroup.WithListenerPerLoop())
	} else {
		a, err = srv.Listen(loops, "tcp", addr, loopgroup.WithListenerPerLoop())
	}
	if err != nil {
		return err
	}
	ready(a, loops.Loops()[0].Backend().Name.String())
	<-ctx.Done()

	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return srv.Shutdown(sctx)
}

// service holds the routes. Handlers run on the connection's loop: they must
// not block (hand blocking work to another goroutine with Response.Defer and
// finish the response there, or serve an http.Handler with
// httpserver.New).
type service struct {
	served atomic.Int64
}

func (s *service) ServeFast(w *httpserver.Response, r *httpserver.Request) {
	n := s.served.Add(1)
	path, method := string(r.Path()), r.Method()
	switch {
	case path == "/" && method == "GET":
		w.AddHeader("Content-Type", "text/plain; charset=utf-8")
		_, _ = w.WriteString("Hello from ringloop\n")
	case path == "/status" && method == "GET":
		writeJSON(w, 200, map[string]any{
			"served": n,
			"loop":   r.Conn().Loop().Name(),
			"time":   time.Now().UTC().Format(time.RFC3339),
		})
	case path == "/greet" && method == "POST":
		var in struct {
			Name string `json:"name"`
		}
		if err := json.Unmarshal(r.Body(), &in); err != nil || in.Name == "" {
			writeJSON(w, 400, map[string]string{"error": "want {\"name\": \"...\"}"})
			return
		}
		writeJSON(w, 200, map[string]string{"greeting": "hello, " + in.Name})
	default:
		writeJSON(w, 404, map[string]string{"error": "no route for " + method + " " + path})
	}
}

func writeJSON(w *httpserver.Response, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status, b = 500, []byte(`{"error":"encoding"}`)
	}
	w.SetStatus(status)
	w.AddHeader("Content-Type", "application/json")
	_, _ = w.Write(append(b, '\n'))
}
