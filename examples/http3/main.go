// Command http3 serves an http.Handler over HTTP/3 with quic-go's http3
// package on a UDP socket that a ringloop loop serves (netconn.ListenPacket):
// quic-go reads and writes datagrams through the net.PacketConn, the loop
// receives and sends them in batches (recvmmsg/sendmmsg, or io_uring).
//
//	go run . -addr 127.0.0.1:4433 -cert cert.pem -key key.pem
//
// Without -cert and -key it makes a self-signed certificate for localhost,
// 127.0.0.1 and ::1. GET / answers with a greeting, POST /echo with the
// request's body. SIGINT or SIGTERM shut it down gracefully.
//
// -socket net serves the same handler on a net.UDPConn instead, to compare.
// It is a module of its own, so that ringloop's module does not depend on
// quic-go.
package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/quic-go/quic-go/http3"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/netconn"
	"github.com/ringloop/ringloop/packet"
)

// socketBuffer is the SO_RCVBUF and SO_SNDBUF the socket asks for: the
// 7 MiB quic-go wants (the kernel caps it at net.core.rmem_max/wmem_max).
// quic-go cannot set it on a conn that is not a *net.UDPConn, so the
// socket opens with it.
const socketBuffer = 7 << 20

func main() {
	addr := flag.String("addr", "127.0.0.1:4433", "UDP address to serve")
	cert := flag.String("cert", "", "certificate file (PEM); self-signed when empty")
	key := flag.String("key", "", "private key file (PEM)")
	socket := flag.String("socket", "ringloop", "the UDP socket: ringloop (a loop's) or net (a net.UDPConn)")
	flag.Parse()
	if err := run(*addr, *cert, *key, *socket); err != nil {
		log.Fatal(err)
	}
}

func run(addr, certFile, keyFile, socket string) error {
	cert, err := loadCert(certFile, keyFile)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	var pc net.PacketConn
	backend := "net"
	switch socket {
	case "ringloop":
		loop, err := engine.New()
		if err != nil {
			return err
		}
		defer func() {
			shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			loop.Shutdown(shutdown)
		}()
		pc, err = netconn.ListenPacket(loop, "udp", addr,
			netconn.WithPacketOptions(packet.Options{SendBuffer: socketBuffer, RecvBuffer: socketBuffer}),
			netconn.WithLimits(netconn.Limits{Read: 1 << 20}))
		if err != nil {
			return err
		}
		backend = loop.Backend().Name.String()
	case "net":
		ua, err := net.ResolveUDPAddr("udp", addr)
		if err != nil {
			return err
		}
		pc, err = net.ListenUDP("udp", ua)
		if err != nil {
			return err
		}
	default:
		return fmt.Errorf("-socket %q: expected ringloop or net", socket)
	}
	defer pc.Close()

	srv := &http3.Server{
		Handler:   handler(),
		TLSConfig: http3.ConfigureTLSConfig(&tls.Config{Certificates: []tls.Certificate{cert}}),
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(pc) }()
	log.Printf("listening on %s (%s)", pc.LocalAddr(), backend)

	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil {
		return err
	}
	if err := <-served; err != nil && !errors.Is(err, http.ErrServerClosed) && !errors.Is(err, net.ErrClosed) {
		return err
	}
	return nil
}

// handler answers GET / with a greeting and POST /echo with the request's
// body.
func handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "hello over %s\n", r.Proto)
	})
	mux.HandleFunc("POST /echo", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/octet-stream")
		if _, err := io.Copy(w, r.Body); err != nil {
			log.Printf("echo: %v", err)
		}
	})
	return mux
}
