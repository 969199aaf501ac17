package frame_test

import (
	"bufio"
	"bytes"
	"log"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/frame"
)

// shout answers each line in upper case.
type shout struct{}

func (shout) OnOpen(c *engine.Conn) {}
func (shout) OnFrame(c *engine.Conn, line []byte) {
	c.Write(append(bytes.ToUpper(line), '\n'))
}
func (shout) OnClose(c *engine.Conn, err error) {}

// A line server: bufio.ScanLines splits, the handler sees whole lines.
func ExampleSplit() {
	loop, err := engine.New()
	if err != nil {
		log.Fatal(err)
	}
	defer loop.Close()
	ln, err := engine.Listen(loop, "tcp", "127.0.0.1:0", frame.Split(bufio.ScanLines, shout{}))
	if err != nil {
		log.Fatal(err)
	}
	defer ln.Close()
	// ... serve until told to stop.
}
