package engine_test

import (
	"context"
	"fmt"
	"io"
	"net"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/tasks"
)

// upper answers every read with the bytes in upper case.
type upper struct{}

func (upper) OnOpen(c *engine.Conn) {}

func (upper) OnData(c *engine.Conn, b []byte) {
	out := make([]byte, len(b))
	for i, ch := range b {
		if 'a' <= ch && ch <= 'z' {
			ch -= 'a' - 'A'
		}
		out[i] = ch
	}
	c.Write(out) // on the loop: gathered and flushed once per iteration
}

func (upper) OnClose(c *engine.Conn, err error) {}

// A loop serving TCP: one goroutine locked to a thread, io_uring where the
// kernel allows it, epoll otherwise.
func Example() {
	loop, err := engine.New()
	if err != nil {
		panic(err)
	}
	defer loop.Close()

	ln, err := engine.Listen(loop, "tcp", "127.0.0.1:0", upper{})
	if err != nil {
		panic(err)
	}
	defer ln.Close()

	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		panic(err)
	}
	defer c.Close()
	c.Write([]byte("hello, ringloop"))
	buf := make([]byte, 15)
	io.ReadFull(c, buf)
	fmt.Println(string(buf))
	// Output: HELLO, RINGLOOP
}

// Tasks from any goroutine run on the loop, in order; timers run there too.
func ExampleLoop_Execute() {
	loop, _ := engine.New()
	defer loop.Close()

	done := make(chan struct{})
	loop.Execute(tasks.Func(func() { fmt.Println("first") }))
	loop.Schedule(tasks.Func(func() { fmt.Println("after 10ms"); close(done) }), 10e6)
	loop.Execute(tasks.Func(func() { fmt.Println("second") }))
	<-done
	// Output:
	// first
	// second
	// after 10ms
}

// connCounter is a ConnObserver: it counts the connections a listener
// serves, beside the handler, never wrapping it.
type connCounter struct {
	open   int           // on the loop
	closed chan struct{} // closed at the first ConnClosed
}

func (n *connCounter) ConnOpened(*engine.Conn)        { n.open++ }
func (n *connCounter) ConnClosed(*engine.Conn, error) { close(n.closed) }

// An observer watches connections without wrapping their handler, so the
// handler's optional interfaces (IdleHandler, HalfCloseHandler, ...) still
// reach it.
func ExampleWithObserver() {
	loop, _ := engine.New()
	defer loop.Close()
	n := &connCounter{closed: make(chan struct{})}
	ln, _ := engine.Listen(loop, "tcp", "127.0.0.1:0", upper{}, engine.WithObserver(n))
	defer ln.Close()

	c, _ := net.Dial("tcp", ln.Addr().String())
	c.Close()
	<-n.closed
	opened, _ := engine.Submit(loop, func() (int, error) { return n.open, nil }).Await(context.Background())
	fmt.Println("opened", opened, "then closed")
	// Output: opened 1 then closed
}
