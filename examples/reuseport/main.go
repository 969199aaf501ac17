// Command reuseport runs the SO_REUSEPORT model: every worker loop owns a
// listening socket on the same port and accepts for itself, and the kernel
// spreads incoming connections over the sockets, so there is no boss and no
// hand-off. It serves an echo on 127.0.0.1, drives a little traffic itself,
// prints how the kernel spread the connections and exits.
package main

import (
	"context"
	"fmt"
	"io"
	"log"
	"net"
	"time"

	"github.com/ringloop/ringloop/examples/echo"
	"github.com/ringloop/ringloop/loopgroup"
)

func main() {
	g, err := loopgroup.New(loopgroup.WithLoops(4), loopgroup.WithName("acceptor"))
	if err != nil {
		log.Fatal(err)
	}
	defer g.Close()
	srv, err := loopgroup.Serve(g, "tcp", "127.0.0.1:0", echo.Handler{}, loopgroup.WithListenerPerLoop())
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("SO_REUSEPORT: %d loops each listen on %s\n", len(srv.Listeners()), srv.Addr())

	// 64 clients; each echoes one message and stays open until counted.
	var conns []net.Conn
	for range 64 {
		c, err := net.DialTimeout("tcp", srv.Addr().String(), 5*time.Second)
		if err != nil {
			log.Fatal(err)
		}
		_ = c.SetDeadline(time.Now().Add(10 * time.Second))
		buf := make([]byte, 5)
		if _, err := c.Write([]byte("hello")); err != nil {
			log.Fatal(err)
		}
		if _, err := io.ReadFull(c, buf); err != nil {
			log.Fatal(err)
		}
		conns = append(conns, c)
	}
	for _, l := range g.Loops() {
		fmt.Printf("  %s accepted and serves %d connections\n", l.Name(), g.Connections(l))
	}
	for _, c := range conns {
		c.Close()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		log.Fatal(err)
	}
	fmt.Println("shut down cleanly")
}
