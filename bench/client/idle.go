package client

import (
	"context"
	"fmt"
	"io"
	"net"
)

// Proto is what the idle connections speak.
type Proto int

// The protocols: echo (a byte), HTTP (a GET), WebSocket (the handshake,
// then a one-byte message echoed).
const (
	ProtoEcho Proto = iota
	ProtoHTTP
	ProtoWebSocket
)

// Warm makes n exchanges over one connection and closes it, so that the
// server's fixed pools (buffer rings, heap) are already in use before the
// idle connections are counted: their cost then is per connection only.
func Warm(ctx context.Context, addr string, n int, proto Proto) error {
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return fmt.Errorf("warm: %w", err)
	}
	defer c.Close()
	if proto == ProtoWebSocket {
		ws, err := wsHandshake(c, "/echo")
		if err != nil {
			return fmt.Errorf("warm: %w", err)
		}
		c = ws
	}
	r := newReader(c)
	for i := range n {
		if proto == ProtoHTTP {
			if _, err = c.Write([]byte(PlaintextRequest)); err == nil {
				_, err = ReadResponse(r)
			}
		} else if _, err = c.Write([]byte{'x'}); err == nil {
			_, err = r.ReadByte()
		}
		if err != nil {
			return fmt.Errorf("warm: exchange %d: %w", i, err)
		}
	}
	return nil
}

// Idle opens n connections to addr and makes one exchange on each (a byte
// for echo, a GET for HTTP, the handshake and a one-byte message for
// WebSocket) so the server has accepted and served it, then leaves them
// open and idle. Close them with the returned function.
func Idle(ctx context.Context, addr string, n int, proto Proto) (func(), error) {
	conns := make([]net.Conn, 0, n)
	closeAll := func() {
		for _, c := range conns {
			c.Close()
		}
	}
	var d net.Dialer
	buf := make([]byte, 4096)
	for range n {
		c, err := d.DialContext(ctx, "tcp", addr)
		if err != nil {
			closeAll()
			return nil, fmt.Errorf("idle: dial %d of %d: %w", len(conns)+1, n, err)
		}
		conns = append(conns, c)
		if proto == ProtoWebSocket {
			var ws *wsConn
			if ws, err = wsHandshake(c, "/echo"); err == nil {
				if _, err = ws.Write([]byte{'x'}); err == nil {
					_, err = io.ReadFull(ws, buf[:1])
				}
			}
		} else if proto == ProtoHTTP {
			if _, err = c.Write([]byte(PlaintextRequest)); err == nil {
				_, err = ReadResponse(newReader(c))
			}
		} else if _, err = c.Write([]byte{'x'}); err == nil {
			_, err = io.ReadFull(c, buf[:1])
		}
		if err != nil {
			closeAll()
			return nil, fmt.Errorf("idle: exchange on connection %d: %w", len(conns), err)
		}
	}
	return closeAll, nil
}
