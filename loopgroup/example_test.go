package loopgroup_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"strings"
	"time"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/examples/echo"
	"github.com/ringloop/ringloop/loopgroup"
)

// A boss loop accepts, two worker loops serve: each connection is handed to
// one worker, round robin, and stays there.
func Example() {
	boss, err := loopgroup.New(loopgroup.WithLoops(1))
	if err != nil {
		panic(err)
	}
	defer boss.Close()
	workers, err := loopgroup.New(loopgroup.WithLoops(2), loopgroup.WithName("worker"))
	if err != nil {
		panic(err)
	}
	defer workers.Close()

	srv, err := loopgroup.Serve(workers, "tcp", "127.0.0.1:0", echo.Handler{}, loopgroup.WithBoss(boss))
	if err != nil {
		panic(err)
	}
	var clients []net.Conn
	for range 4 {
		c, err := net.Dial("tcp", srv.Addr().String())
		if err != nil {
			panic(err)
		}
		buf := make([]byte, 2)
		c.Write([]byte("hi"))
		io.ReadFull(c, buf) // echoed: the connection is served
		clients = append(clients, c)
	}
	for _, l := range workers.Loops() {
		fmt.Printf("%s serves %d connections\n", l.Name(), workers.Connections(l))
	}
	for _, c := range clients {
		c.Close()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	fmt.Println("shutdown:", srv.Shutdown(ctx))
	// Output:
	// worker-0 serves 2 connections
	// worker-1 serves 2 connections
	// shutdown: <nil>
}

// lookup is a handler whose requests block (a database, say): it hands each
// to the executor group and writes the answer back on the connection's own
// loop, which meanwhile serves other connections.
type lookup struct{ blocking *loopgroup.Group }

func (h lookup) OnOpen(c *engine.Conn) {
	c.SetValue(h.blocking.Next()) // one executor loop per connection keeps its answers in order
}

func (h lookup) OnData(c *engine.Conn, b []byte) {
	key := strings.TrimSpace(string(b)) // copy: b is only valid during the call
	err := loopgroup.Offload(c.Value().(*engine.Loop), c,
		func() (string, error) { // on the executor loop: blocking is fine here
			time.Sleep(10 * time.Millisecond)
			return strings.ToUpper(key), nil
		},
		func(c *engine.Conn, v string, err error) { // back on c's loop
			fmt.Fprintf(c, "%s\n", v)
		})
	if err != nil {
		c.Close()
	}
}

func (h lookup) OnClose(c *engine.Conn, err error) {}

// Blocking work goes to an executor group; results come back on the
// connection's loop.
func ExampleOffload() {
	io1, err := loopgroup.New(loopgroup.WithLoops(1))
	if err != nil {
		panic(err)
	}
	defer io1.Close()
	blocking, err := loopgroup.NewExecutorGroup(loopgroup.WithLoops(2))
	if err != nil {
		panic(err)
	}
	defer blocking.Close()

	srv, err := loopgroup.Serve(io1, "tcp", "127.0.0.1:0", lookup{blocking})
	if err != nil {
		panic(err)
	}
	defer srv.Close()
	c, err := net.Dial("tcp", srv.Addr().String())
	if err != nil {
		panic(err)
	}
	defer c.Close()
	r := bufio.NewReader(c)
	for _, k := range []string{"alpha", "beta"} {
		fmt.Fprintln(c, k)
		line, _ := r.ReadString('\n')
		fmt.Print(line)
	}
	// Output:
	// ALPHA
	// BETA
}
