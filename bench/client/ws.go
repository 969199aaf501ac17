package client

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
)

// A WebSocket client just big enough for the benchmarks: the opening
// handshake with a fixed key, binary frames masked with a zero key (valid
// framing that costs the client no XOR; the server unmasks as for any
// key), unmasked server frames read back.

const (
	wsKey    = "dGhlIHNhbXBsZSBub25jZQ==" // RFC 6455's example key
	wsAccept = "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="
)

// wsConn is a WebSocket connection seen as a byte stream: Write sends p as
// one binary message, Read returns the payloads of the server's data
// frames in order. The echo client runs over it unchanged.
type wsConn struct {
	net.Conn
	r    *bufio.Reader
	left int64 // payload bytes of the current frame not yet read
	wbuf []byte
}

// wsHandshake upgrades cn on path and returns it as a wsConn.
func wsHandshake(cn net.Conn, path string) (*wsConn, error) {
	req := "GET " + path + " HTTP/1.1\r\nHost: bench\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
		"Sec-WebSocket-Key: " + wsKey + "\r\nSec-WebSocket-Version: 13\r\n\r\n"
	if _, err := io.WriteString(cn, req); err != nil {
		return nil, fmt.Errorf("websocket handshake: %w", err)
	}
	r := bufio.NewReaderSize(cn, 4096)
	resp, err := http.ReadResponse(r, nil)
	if err != nil {
		return nil, fmt.Errorf("websocket handshake: %w", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSwitchingProtocols || resp.Header.Get("Sec-WebSocket-Accept") != wsAccept {
		return nil, fmt.Errorf("websocket handshake: %s, accept %q", resp.Status, resp.Header.Get("Sec-WebSocket-Accept"))
	}
	return &wsConn{Conn: cn, r: r}, nil
}

// appendFrame appends a masked (zero key), final binary frame carrying p.
func appendFrame(dst, p []byte) []byte {
	switch n := len(p); {
	case n <= 125:
		dst = append(dst, 0x82, 0x80|byte(n))
	case n <= 0xFFFF:
		dst = append(dst, 0x82, 0x80|126)
		dst = binary.BigEndian.AppendUint16(dst, uint16(n))
	default:
		dst = append(dst, 0x82, 0x80|127)
		dst = binary.BigEndian.AppendUint64(dst, uint64(n))
	}
	dst = append(dst, 0, 0, 0, 0) // the mask key
	return append(dst, p...)
}

func (c *wsConn) Write(p []byte) (int, error) {
	c.wbuf = appendFrame(c.wbuf[:0], p)
	if _, err := c.Conn.Write(c.wbuf); err != nil {
		return 0, err
	}
	return len(p), nil
}

// readHeader reads a server frame's header: its opcode and payload length.
func readHeader(r *bufio.Reader) (op byte, n int64, err error) {
	var h [8]byte
	if _, err := io.ReadFull(r, h[:2]); err != nil {
		return 0, 0, err
	}
	if h[1]&0x80 != 0 {
		return 0, 0, errors.New("websocket: masked server frame")
	}
	op, n = h[0]&0x0F, int64(h[1]&0x7F)
	switch n {
	case 126:
		if _, err := io.ReadFull(r, h[:2]); err != nil {
			return 0, 0, err
		}
		n = int64(binary.BigEndian.Uint16(h[:2]))
	case 127:
		if _, err := io.ReadFull(r, h[:8]); err != nil {
			return 0, 0, err
		}
		n = int64(binary.BigEndian.Uint64(h[:8]))
	}
	return op, n, nil
}

func (c *wsConn) Read(b []byte) (int, error) {
	for c.left == 0 {
		op, n, err := readHeader(c.r)
		if err != nil {
			return 0, err
		}
		switch {
		case op == 0x8:
			return 0, io.EOF
		case op&0x8 != 0: // ping, pong: not data
			if _, err := c.r.Discard(int(n)); err != nil {
				return 0, err
			}
		default:
			c.left = n
		}
	}
	if int64(len(b)) > c.left {
		b = b[:c.left]
	}
	n, err := c.r.Read(b)
	c.left -= int64(n)
	return n, err
}

// readMessage reads the next data frame's payload into buf (grown as
// needed) and returns it.
func (c *wsConn) readMessage(buf []byte) ([]byte, error) {
	for {
		op, n, err := readHeader(c.r)
		if err != nil {
			return nil, err
		}
		if op == 0x8 {
			return nil, io.EOF
		}
		if cap(buf) < int(n) {
			buf = make([]byte, n)
		}
		buf = buf[:n]
		if _, err := io.ReadFull(c.r, buf); err != nil {
			return nil, err
		}
		if op&0x8 == 0 {
			return buf, nil
		}
	}
}
