// Command single runs the single-threaded reactor model: a group of one loop
// is both boss and worker, so the loop that accepts a connection also reads,
// writes and runs its handler, with no hand-off at all (Netty's
// group(new NioEventLoopGroup(1))). It serves a line counter on 127.0.0.1,
// drives a little traffic itself, prints what happened and exits.
package main

import (
	"bufio"
	"context"
	"fmt"
	"log"
	"net"
	"strings"
	"time"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/frame"
	"github.com/ringloop/ringloop/loopgroup"
)

// counter answers each line with how many lines the server has seen in all.
// Every callback runs on the one loop, so the total needs no lock; the frame
// package hands it whole lines however the bytes arrive.
type counter struct{ lines int }

func (h *counter) OnOpen(c *engine.Conn) {}

func (h *counter) OnFrame(c *engine.Conn, line []byte) {
	h.lines++
	fmt.Fprintf(c, "%d\n", h.lines) // Conn is an io.Writer
}

func (h *counter) OnClose(c *engine.Conn, err error) {}

func main() {
	g, err := loopgroup.New(loopgroup.WithLoops(1), loopgroup.WithName("reactor"))
	if err != nil {
		log.Fatal(err)
	}
	defer g.Close()
	srv, err := loopgroup.Serve(g, "tcp", "127.0.0.1:0", frame.Split(bufio.ScanLines, &counter{}))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("single reactor: %s accepts and serves on %s\n", g.Loops()[0].Name(), srv.Addr())

	// Three clients, one after another, five lines each: the replies count
	// across connections because one loop owns the counter.
	var last string
	for i := range 3 {
		c, err := net.DialTimeout("tcp", srv.Addr().String(), 5*time.Second)
		if err != nil {
			log.Fatal(err)
		}
		_ = c.SetDeadline(time.Now().Add(10 * time.Second))
		r := bufio.NewReader(c)
		for j := range 5 {
			fmt.Fprintf(c, "client %d line %d\n", i, j)
			if last, err = r.ReadString('\n'); err != nil {
				log.Fatal(err)
			}
		}
		c.Close()
	}
	st := g.Loops()[0].Metrics()
	fmt.Printf("  last reply %s; connections served locally: %d, handed off: %d\n",
		strings.TrimSpace(last), st.Accepted-st.Handoffs, st.Handoffs)

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		log.Fatal(err)
	}
	fmt.Println("shut down cleanly")
}
