// Command tcp is an echo server on one ringloop loop: a Handler whose
// callbacks run on the loop, with no goroutine per connection.
package main

import (
	"context"
	"flag"
	"log"
	"os"
	"os/signal"
	"time"

	"github.com/ringloop/ringloop/engine"
)

// echo sends back what it receives. A connection's callbacks run on its
// loop one at a time, so per-connection state needs no lock.
type echo struct{}

func (echo) OnOpen(c *engine.Conn) {}

// OnData's b is valid during the call; Write copies it into the
// connection's buffer, sent once per loop iteration.
func (echo) OnData(c *engine.Conn, b []byte) { c.Write(b) }

func (echo) OnClose(c *engine.Conn, err error) {}

func main() {
	addr := flag.String("addr", "127.0.0.1:7000", "address to listen on")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt) // before serving: Ctrl-C shuts down
	defer stop()

	loop, err := engine.New() // io_uring where the kernel allows it, else epoll (the reason is logged)
	if err != nil {
		log.Fatal(err)
	}
	ln, err := engine.Listen(loop, "tcp", *addr, echo{})
	if err != nil {
		log.Fatal(err)
	}
	log.Printf("listening on %s (%s)", ln.Addr(), loop.Backend().Name)

	<-ctx.Done()
	ln.Close()
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	loop.Shutdown(shutdown) // close the connections, wait for the loop to end
}
