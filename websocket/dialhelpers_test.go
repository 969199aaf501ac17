package websocket_test

import (
	"bufio"
	"bytes"
	"compress/flate"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/internal/testenv"
	"github.com/ringloop/ringloop/tasks"
	"github.com/ringloop/ringloop/websocket"
)

// message is a message a client received (copied).
type message struct {
	kind websocket.MessageKind
	p    []byte
}

// client records a dialed connection's events.
type client struct {
	opens  chan *websocket.Conn
	msgs   chan message
	closes chan closed
}

func newClient() *client {
	return &client{opens: make(chan *websocket.Conn, 4), msgs: make(chan message, 1024), closes: make(chan closed, 4)}
}

func (cl *client) OnOpen(c *websocket.Conn) { cl.opens <- c }
func (cl *client) OnMessage(c *websocket.Conn, kind websocket.MessageKind, p []byte) {
	cl.msgs <- message{kind, append([]byte(nil), p...)}
}
func (cl *client) OnClose(c *websocket.Conn, code int, reason string, err error) {
	cl.closes <- closed{code, reason, err}
}

// next waits for the next message.
func (cl *client) next(t *testing.T) message {
	t.Helper()
	select {
	case m := <-cl.msgs:
		return m
	case <-time.After(60 * time.Second):
		t.Fatal("no message reached the client")
	}
	return message{}
}

// closed waits for the client's OnClose.
func (cl *client) closed(t *testing.T) closed {
	t.Helper()
	select {
	case c := <-cl.closes:
		return c
	case <-time.After(60 * time.Second):
		t.Fatal("the client's OnClose did not run")
	}
	return closed{}
}

// newLoop starts a loop of the combo for clients, closed at cleanup.
func newLoop(t *testing.T, c testenv.Combo) *engine.Loop {
	t.Helper()
	loop, err := engine.New(c.Options()...)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, loop.Close()) })
	return loop
}

// dial dials url from loop and checks OnOpen ran with the Conn returned.
func dial(t *testing.T, loop *engine.Loop, url string, cl *client, opts ...websocket.Option) *websocket.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	ws, err := websocket.Dial(ctx, loop, url, cl, opts...)
	require.NoError(t, err)
	require.Same(t, ws, <-cl.opens, "OnOpen ran before Dial returned, with its Conn")
	return ws
}

// onLoop runs fn on c's loop and returns its error.
func onLoop(t *testing.T, c *websocket.Conn, fn func() error) error {
	t.Helper()
	done := make(chan error, 1)
	require.NoError(t, c.Conn().Loop().Execute(tasks.Func(func() { done <- fn() })))
	return <-done
}

// pattern is n bytes that differ from one message to the next (text-safe).
func pattern(n, seed int) []byte {
	p := make([]byte, n)
	for i := range p {
		p[i] = 'a' + byte((i+seed)%26)
	}
	return p
}

// rawServer accepts one connection on loopback and runs serve with it and
// the handshake request it read; the connection is closed after serve
// returns, and cleanup waits for it. serve's failures are reported through
// t.Errorf (it runs on a goroutine of its own).
func rawServer(t *testing.T, serve func(conn net.Conn, r *bufio.Reader, req *http.Request)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		conn, err := ln.Accept()
		if err != nil {
			return
		}
		defer conn.Close()
		_ = conn.SetDeadline(time.Now().Add(60 * time.Second))
		r := bufio.NewReaderSize(conn, 1<<16)
		req, err := http.ReadRequest(r)
		if err != nil {
			t.Errorf("raw server: reading the handshake: %v", err)
			return
		}
		serve(conn, r, req)
	}()
	t.Cleanup(func() {
		ln.Close()
		wg.Wait()
	})
	return ln.Addr().String()
}

// answer101 is a valid answer to req, plus extra header lines.
func answer101(req *http.Request, extra string) string {
	return "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: " +
		websocket.AcceptKey(req.Header.Get("Sec-WebSocket-Key")) + "\r\n" + extra + "\r\n"
}

// clientFrame is a frame a client sent, unmasked.
type clientFrame struct {
	b0      byte
	masked  bool
	key     [4]byte
	payload []byte
}

func (f clientFrame) String() string {
	return fmt.Sprintf("%#x masked=%v %d bytes %.40q", f.b0, f.masked, len(f.payload), f.payload)
}

// readClientFrame reads one frame and unmasks its payload.
func readClientFrame(r io.Reader) (clientFrame, error) {
	var h [2]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return clientFrame{}, err
	}
	f := clientFrame{b0: h[0], masked: h[1]&0x80 != 0}
	n := uint64(h[1] & 0x7F)
	switch n {
	case 126:
		var l [2]byte
		if _, err := io.ReadFull(r, l[:]); err != nil {
			return f, err
		}
		n = uint64(binary.BigEndian.Uint16(l[:]))
	case 127:
		var l [8]byte
		if _, err := io.ReadFull(r, l[:]); err != nil {
			return f, err
		}
		n = binary.BigEndian.Uint64(l[:])
	}
	if f.masked {
		if _, err := io.ReadFull(r, f.key[:]); err != nil {
			return f, err
		}
	}
	f.payload = make([]byte, n)
	if _, err := io.ReadFull(r, f.payload); err != nil {
		return f, err
	}
	if f.masked {
		for i := range f.payload {
			f.payload[i] ^= f.key[i%4]
		}
	}
	return f, nil
}

// inflated decompresses a permessage-deflate payload.
func inflated(t *testing.T, p []byte) []byte {
	t.Helper()
	r := flate.NewReader(io.MultiReader(bytes.NewReader(p), bytes.NewReader([]byte{0, 0, 0xff, 0xff, 1, 0, 0, 0xff, 0xff})))
	out, err := io.ReadAll(r)
	require.NoError(t, err)
	return out
}
