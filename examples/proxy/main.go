// Command proxy is a TCP proxy on one ringloop loop: for each accepted client
// it dials the upstream from the same loop and pipes bytes both ways, with
//
//   - backpressure: when one side's outbound buffer passes its high watermark
//     the proxy stops reading from the other side (PauseRead), and reads
//     again once it drains (OnWritabilityChanged), so a slow reader on either
//     end bounds the proxy's memory;
//   - half-close: a FIN from one side (OnReadClosed) becomes a CloseWrite on
//     the other, so protocols that end a request with a half-close work; once
//     both directions are shut, the engine closes each connection.
//
// Every callback of both connections runs on the one loop, so the pair needs
// no locks.
//
//	go run ./examples/proxy -listen 127.0.0.1:9000 -upstream 127.0.0.1:6379
//
// Its first line on stdout is "listening ADDR backend=NAME".
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/tasks"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:9000", "TCP address to accept clients on")
	upstream := flag.String("upstream", "", "TCP address to forward to")
	flag.Parse()
	if *upstream == "" {
		fmt.Fprintln(os.Stderr, "proxy: -upstream is required")
		os.Exit(2)
	}
	l, err := engine.New(engine.WithName("proxy"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "proxy:", err)
		os.Exit(1)
	}
	defer l.Close()
	ln, err := Serve(l, *listen, *upstream)
	if err != nil {
		fmt.Fprintln(os.Stderr, "proxy:", err)
		os.Exit(1)
	}
	fmt.Printf("listening %s backend=%s\n", ln.Addr(), l.Backend().Name)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	<-ctx.Done()
	_ = ln.Close()
}

// Serve accepts clients on addr, each piped to a new connection to upstream
// dialled from loop l.
func Serve(l *engine.Loop, addr, upstream string) (*engine.Listener, error) {
	return engine.Listen(l, "tcp", addr, &client{upstream: upstream})
}

// end is one connection's side of a pair, kept with Conn.SetValue.
type end struct {
	other  *engine.Conn // where its bytes go; nil until the upstream connected
	closed bool
}

func endOf(c *engine.Conn) *end { return c.Value().(*end) }

// pipe is the behaviour both connections of a pair share.
type pipe struct{}

// OnData forwards b, and stops reading while the other side is saturated.
func (pipe) OnData(c *engine.Conn, b []byte) {
	o := endOf(c).other
	_, _ = o.Write(b)
	if !o.Writable() {
		c.PauseRead()
	}
}

// OnWritabilityChanged resumes reading the side that feeds c once c drained.
func (pipe) OnWritabilityChanged(c *engine.Conn, writable bool) {
	if o := endOf(c).other; writable && o != nil {
		o.ResumeRead()
	}
}

// OnReadClosed passes the FIN on, after what was forwarded before it.
func (pipe) OnReadClosed(c *engine.Conn) {
	if o := endOf(c).other; o != nil {
		_ = o.CloseWrite()
	}
}

// OnClose ends the pair: the other side sends what it holds, then closes
// (a no-op when it is closing already).
func (pipe) OnClose(c *engine.Conn, err error) {
	e := endOf(c)
	e.closed = true
	if e.other != nil {
		_ = e.other.Close()
	}
}

// client serves accepted connections: it holds their reads until the
// upstream connection is up.
type client struct {
	pipe
	upstream string
}

func (h *client) OnOpen(c *engine.Conn) {
	c.SetValue(&end{})
	c.PauseRead()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	f := engine.DialAsync(ctx, c.Loop(), "tcp", h.upstream, &server{down: c})
	f.AddListener(tasks.Inline, func(f tasks.Future[*engine.Conn]) {
		cancel()
		if _, _, err := f.Poll(); err != nil {
			_ = c.Close() // no upstream: drop the client
		}
	})
}

// server serves the upstream connection of one client.
type server struct {
	pipe
	down *engine.Conn
}

func (h *server) OnOpen(c *engine.Conn) {
	d := endOf(h.down)
	c.SetValue(&end{other: h.down})
	if d.closed { // the client left while we dialled
		_ = c.Close()
		return
	}
	d.other = c
	h.down.ResumeRead()
}
