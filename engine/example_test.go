package engine_test

import (
	"fmt"
	"io"
	"net"

	"github.com/ringloop/ringloop/engine"
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
	loop.ExecuteFunc(func() { fmt.Println("first") })
	loop.ScheduleFunc(func() { fmt.Println("after 10ms"); close(done) }, 10e6)
	loop.ExecuteFunc(func() { fmt.Println("second") })
	<-done
	// Output:
	// first
	// second
	// after 10ms
}
