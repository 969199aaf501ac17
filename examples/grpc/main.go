// Command grpc serves gRPC through ringloop's http.Handler adapter:
// grpc-go's Server.ServeHTTP mounted on httpserver.New, the HTTP/2
// connections run by ringloop's loops (one per GOMAXPROCS), each RPC's
// handler on the adapter's goroutines. Over TLS (-cert, -key) HTTP/2 is
// offered by ALPN; with -h2c it is cleartext HTTP/2 with prior knowledge,
// which is what grpc-go's client speaks with insecure credentials.
//
//	go run . -addr 127.0.0.1:50051 -h2c
//	go run . -addr 127.0.0.1:50051 -cert cert.pem -key key.pem
//
// It serves two services: ringloop.example.Echo (echo.go), a small one
// with each kind of RPC, and grpc-go's interop TestService
// (grpc.testing.TestService, google.golang.org/grpc/interop's
// implementation), which grpc-go's interop client cases run against.
// Shutdown is graceful on SIGINT or SIGTERM. It logs "listening on ADDR
// (backend NAME, h2c|tls)" once serving.
//
// It is a module of its own, so that ringloop's module does not depend on
// grpc-go.
package main

import (
	"context"
	"flag"
	"log"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/interop"
	testgrpc "google.golang.org/grpc/interop/grpc_testing"

	"github.com/ringloop/ringloop/httpserver"
	"github.com/ringloop/ringloop/loopgroup"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:50051", "TCP address to listen on")
	h2c := flag.Bool("h2c", false, "serve cleartext HTTP/2 with prior knowledge (without -cert)")
	cert := flag.String("cert", "", "PEM certificate (chain) file: serve over TLS (with -key)")
	key := flag.String("key", "", "PEM private key file of -cert")
	flag.Parse()
	if (*cert == "") != (*key == "") {
		log.Fatal("grpc: -cert and -key go together")
	}
	if *h2c == (*cert != "") {
		log.Fatal("grpc: give either -h2c or -cert and -key")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := serve(ctx, *addr, *cert, *key, func(a net.Addr, backend string) {
		mode := "tls"
		if *h2c {
			mode = "h2c"
		}
		log.Printf("listening on %s (backend %s, %s)", a, backend, mode)
	})
	if err != nil {
		log.Fatal("grpc: ", err)
	}
}

// serve runs the gRPC services until ctx ends, then shuts down: the
// HTTP/2 connections get GOAWAY and close once their RPCs are done. With
// certFile and keyFile it serves TLS, else h2c.
func serve(ctx context.Context, addr, certFile, keyFile string, ready func(net.Addr, string)) error {
	// Messages up to 16 MiB each way (grpc-go's default: 4 MiB received).
	gs := grpc.NewServer(grpc.MaxRecvMsgSize(maxMsg), grpc.MaxSendMsgSize(maxMsg))
	registerEcho(gs, &echoServer{})
	testgrpc.RegisterTestServiceServer(gs, interop.NewTestServer())

	loops, err := loopgroup.New(loopgroup.WithName("grpc"))
	if err != nil {
		return err
	}
	defer loops.Close()
	// No read timeout: a streaming RPC's client may pause as long as it
	// likes between messages (gRPC has deadlines of its own).
	opts := []httpserver.Option{httpserver.WithTimeouts(httpserver.Timeouts{Read: httpserver.NoTimeout, Idle: 5 * time.Minute})}
	if certFile == "" {
		opts = append(opts, httpserver.WithH2C())
	}
	srv, err := httpserver.New(gs, opts...)
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

// maxMsg bounds a message either way.
const maxMsg = 16 << 20
