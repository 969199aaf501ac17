// Command metrics is an HTTP service on ringloop that exports its loops and
// its request metrics to Prometheus on /metrics, served by the same loops:
//
//	cd examples/metrics && go run . -addr 127.0.0.1:8080
//	curl localhost:8080/            # the service
//	curl localhost:8080/metrics     # Prometheus's text format
//
// Its loops are the group "http": http-0, http-1... (one per GOMAXPROCS, or
// -loops), names that stay the same at every start, so their series do too.
// /metrics shows, per loop, ringloop_loop_* (iterations, completions,
// tasks, panics, I/O and task time, the longest piece of work, connections,
// ...) and, for the server, ringloop_http_responses_total by status class
// and the ringloop_http_request_duration_seconds histogram, beside Go's
// runtime metrics.
//
// It is a module of its own, as package metrics is: client_golang stays out
// of ringloop's core module. It logs "listening on ADDR" once serving and
// shuts down gracefully on SIGINT or SIGTERM.
package main

import (
	"context"
	"flag"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/httpserver"
	"github.com/ringloop/ringloop/loopgroup"
	"github.com/ringloop/ringloop/metrics"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "TCP address to listen on")
	loops := flag.Int("loops", 0, "event loops (0: one per GOMAXPROCS)")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := serve(ctx, *addr, *loops, func(a net.Addr) { log.Printf("listening on %s", a) })
	if err != nil {
		log.Fatal("metrics: ", err)
	}
}

// serve runs the service on n loops (0: GOMAXPROCS) until ctx ends. opts
// reach every loop (tests pick the backend and threading mode with them).
func serve(ctx context.Context, addr string, n int, ready func(net.Addr), opts ...engine.Option) error {
	gopts := []loopgroup.Option{loopgroup.WithName("http"), loopgroup.WithEngineOptions(opts...)}
	if n > 0 {
		gopts = append(gopts, loopgroup.WithLoops(n))
	}
	group, err := loopgroup.New(gopts...)
	if err != nil {
		return err
	}
	defer group.Close()

	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "Hello from ringloop\n")
	})
	srv, err := httpserver.New(mux, httpserver.WithTimeouts(httpserver.Timeouts{ReadHeader: 5 * time.Second, Read: 30 * time.Second, Idle: time.Minute}))
	if err != nil {
		return err
	}

	col := metrics.New()
	if err := col.AddGroup(group); err != nil {
		return err
	}
	if err := col.AddServer("app", srv); err != nil {
		return err
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(col, collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorLog: log.Default()}))

	a, err := srv.Listen(group, "tcp", addr)
	if err != nil {
		return err
	}
	ready(a)
	<-ctx.Done()
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return srv.Shutdown(sctx)
}
