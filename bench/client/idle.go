package client

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"sync"
)

// Proto is what the idle holder speaks on its connections.
type Proto int

// The protocols: a byte echoed, a GET answered, a byte echoed inside TLS
// 1.3 after a full handshake, a one-byte message echoed after the
// WebSocket handshake, a GET answered over HTTP/2 after a full TLS 1.3
// handshake that negotiated h2.
const (
	ProtoEcho Proto = iota
	ProtoHTTP
	ProtoTLSEcho
	ProtoWebSocket
	ProtoH2
)

// warmHandshakes is how many full handshakes Warm makes for TLS, each on a
// connection of its own, so what the server's handshake path keeps (pools,
// stacks) is resident before the idle connections are counted.
const warmHandshakes = 100

// tlsDialers is how many connections the idle holder opens at once over
// TLS: one at a time, 10,000 handshakes would leave both cores half idle.
const tlsDialers = 16

// Warm makes n exchanges over one connection and closes it, so that the
// server's fixed pools (buffer rings, heap) are already in use before the
// idle connections are counted: their cost then is per connection only.
// Over TLS it first makes warmHandshakes full handshakes (over HTTP/2 each
// with its one GET).
func Warm(ctx context.Context, addr string, n int, p Proto) error {
	if p == ProtoH2 {
		for i := range warmHandshakes {
			c, err := dialProto(ctx, addr, p)
			if err == nil {
				err = exchange(c, nil, p)
				c.Close()
			}
			if err != nil {
				return fmt.Errorf("warm: h2 connection %d: %w", i+1, err)
			}
		}
	}
	if p == ProtoTLSEcho {
		msg, buf := []byte{'x'}, []byte{0}
		for i := range warmHandshakes {
			if err := oneHandshake(ctx, addr, msg, buf); err != nil {
				return fmt.Errorf("warm: handshake %d: %w", i+1, err)
			}
		}
	}
	c, err := dialProto(ctx, addr, p)
	if err != nil {
		return fmt.Errorf("warm: %w", err)
	}
	defer c.Close()
	r := newReader(c)
	for i := range n {
		if err = exchange(c, r, p); err != nil {
			return fmt.Errorf("warm: exchange %d: %w", i, err)
		}
	}
	return nil
}

// Idle opens n connections to addr and makes one exchange on each (a byte
// for echo, a GET for HTTP, a handshake and a byte for TLS and WebSocket) so the server
// has accepted and served it, then leaves them open and idle. Close them
// with the returned function.
func Idle(ctx context.Context, addr string, n int, p Proto) (func(), error) {
	workers := 1
	if p == ProtoTLSEcho || p == ProtoH2 {
		workers = tlsDialers
	}
	conns := make([]net.Conn, n)
	closeAll := func() {
		for _, c := range conns {
			if c != nil {
				c.Close()
			}
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	next := make(chan int)
	var wg sync.WaitGroup
	var once sync.Once
	var first error
	for range min(workers, n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				c, err := dialProto(ctx, addr, p)
				if err == nil {
					conns[i] = c
					err = exchange(c, nil, p)
				}
				if err != nil {
					once.Do(func() { first = fmt.Errorf("idle: connection %d of %d: %w", i+1, n, err) })
					cancel()
				}
			}
		}()
	}
feed:
	for i := range n {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	if first == nil {
		first = ctx.Err()
	}
	if first != nil {
		closeAll()
		return nil, first
	}
	return closeAll, nil
}

// dialProto dials addr and, for TLS, completes a full handshake, for
// WebSocket the upgrade.
func dialProto(ctx context.Context, addr string, p Proto) (net.Conn, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	if p == ProtoH2 {
		h2, err := h2Client(ctx, c, addr)
		if err != nil {
			return nil, err
		}
		return h2, nil
	}
	if p == ProtoWebSocket {
		ws, err := wsHandshake(c, "/echo")
		if err != nil {
			c.Close()
			return nil, fmt.Errorf("WebSocket handshake: %w", err)
		}
		return ws, nil
	}
	if p != ProtoTLSEcho {
		return c, nil
	}
	tc := tls.Client(c, freshClientConfig())
	if err := tc.HandshakeContext(ctx); err != nil {
		c.Close()
		return nil, fmt.Errorf("TLS handshake: %w", err)
	}
	return tc, nil
}

// exchange makes one request and reads its answer: a GET for HTTP, else a
// byte echoed. r reads c; nil makes one for an HTTP answer.
func exchange(c net.Conn, r *bufio.Reader, p Proto) error {
	if p == ProtoH2 {
		return c.(*h2Conn).get()
	}
	if p == ProtoHTTP {
		if r == nil {
			r = newReader(c)
		}
		if _, err := io.WriteString(c, PlaintextRequest); err != nil {
			return err
		}
		_, err := ReadResponse(r)
		return err
	}
	if _, err := c.Write([]byte{'x'}); err != nil {
		return err
	}
	if r != nil {
		_, err := r.ReadByte()
		return err
	}
	var b [1]byte
	_, err := io.ReadFull(c, b[:])
	return err
}
