// Command kv is a small in-memory key-value server with a line protocol,
// served on one loop: the frame package splits each connection's bytes into
// lines, so a command that spans reads (a 100 KB value) is assembled once and
// several pipelined in one read are answered in order.
//
//	SET key value   → OK
//	GET key         → the value, or NIL
//	DEL key         → 1 if it was there, else 0
//
// Every line ends with "\r\n"; a line over 1 MiB ends the connection.
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"io"
	"log"
	"os"
	"os/signal"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/frame"
)

const maxLine = 1 << 20

// store serves the commands. Every callback runs on the one loop, so the
// map needs no lock.
type store struct{ m map[string][]byte }

func (s *store) OnOpen(c *engine.Conn) {}

// OnFrame answers one command line; line is valid during the call, so SET
// copies the value it keeps.
func (s *store) OnFrame(c *engine.Conn, line []byte) {
	cmd, rest, _ := bytes.Cut(line, []byte(" "))
	switch string(cmd) {
	case "SET":
		key, val, ok := bytes.Cut(rest, []byte(" "))
		if !ok {
			c.Write([]byte("ERR usage: SET key value\r\n"))
			return
		}
		s.m[string(key)] = bytes.Clone(val)
		c.Write([]byte("OK\r\n"))
	case "GET":
		val, ok := s.m[string(rest)] // no allocation: the compiler reads the map with the bytes
		if !ok {
			c.Write([]byte("NIL\r\n"))
			return
		}
		c.Write(val)
		c.Write([]byte("\r\n"))
	case "DEL":
		_, ok := s.m[string(rest)]
		delete(s.m, string(rest))
		if ok {
			c.Write([]byte("1\r\n"))
		} else {
			c.Write([]byte("0\r\n"))
		}
	default:
		c.Write([]byte("ERR unknown command\r\n"))
	}
}

// OnClose logs connections that ended on a protocol error.
func (s *store) OnClose(c *engine.Conn, err error) {
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, engine.ErrShutdown) {
		log.Printf("%s: %v", c.RemoteAddr(), err)
	}
}

func main() {
	addr := flag.String("addr", "127.0.0.1:6380", "address to listen on")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()

	loop, err := engine.New()
	if err != nil {
		log.Fatal(err)
	}
	h := frame.Split(frame.Delimited([]byte("\r\n"), maxLine), &store{m: map[string][]byte{}})
	ln, err := engine.Listen(loop, "tcp", *addr, h, engine.WithBufferLimits(engine.BufferLimits{Keep: maxLine + 2}))
	if err != nil {
		log.Fatal(err)
	}
	log.Printf("listening on %s (%s)", ln.Addr(), loop.Backend().Name)

	<-ctx.Done()
	ln.Close()
	if err := loop.Close(); err != nil {
		log.Fatal(err)
	}
}
