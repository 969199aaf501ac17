package websocket_test

import (
	"bufio"
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/httpserver"
	"github.com/ringloop/ringloop/internal/testenv"
	"github.com/ringloop/ringloop/loopgroup"
	"github.com/ringloop/ringloop/websocket"
)

// closed is how a server connection ended, as OnClose saw it.
type closed struct {
	code   int
	reason string
	err    error
}

// echo answers every message with itself and reports each close.
type echo struct {
	closes   chan closed
	writable chan bool
}

func newEcho() *echo { return &echo{closes: make(chan closed, 1024), writable: make(chan bool, 1024)} }

func (e *echo) OnOpen(c *websocket.Conn) {}
func (e *echo) OnMessage(c *websocket.Conn, kind websocket.MessageKind, p []byte) {
	switch {
	case kind == websocket.Text && string(p) == "close-me":
		_ = c.Close(4001, "server bye")
	default:
		_ = c.WriteMessage(kind, p)
	}
}
func (e *echo) OnClose(c *websocket.Conn, code int, reason string, err error) {
	e.closes <- closed{code, reason, err}
}
func (e *echo) OnWritabilityChanged(c *websocket.Conn, writable bool) {
	select {
	case e.writable <- writable:
	default:
	}
}

// next waits for the next server-side close.
func (e *echo) next(t *testing.T) closed {
	t.Helper()
	select {
	case c := <-e.closes:
		return c
	case <-time.After(30 * time.Second):
		t.Fatal("the server's OnClose did not run")
	}
	return closed{}
}

// serve runs h behind UpgradeFast on a loop of the combo and returns the
// server's address.
func serve(t *testing.T, c testenv.Combo, h websocket.Handler, opts []websocket.Option, conn ...engine.ConnOption) string {
	t.Helper()
	s, err := httpserver.NewFast(httpserver.HandlerFunc(func(w *httpserver.Response, r *httpserver.Request) {
		_ = websocket.UpgradeFast(w, r, h, opts...)
	}))
	require.NoError(t, err)
	loop, err := engine.New(c.Options()...)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, loop.Close()) })
	a, err := s.Listen(loop, "tcp", "127.0.0.1:0", loopgroup.WithConnOptions(conn...))
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.Close()) })
	return a.String()
}

// rawConn is a client written here, byte by byte, for what well-behaved
// clients never send.
type rawConn struct {
	net.Conn
	r *bufio.Reader
}

// dialRaw opens a connection and completes the handshake, checking the
// server's Sec-WebSocket-Accept.
func dialRaw(t testing.TB, addr string) *rawConn {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, 10*time.Second)
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close() })
	_ = conn.SetDeadline(time.Now().Add(60 * time.Second))
	_, err = io.WriteString(conn, "GET /ws HTTP/1.1\r\nHost: a\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"+
		"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
	require.NoError(t, err)
	r := newReader(conn)
	resp, err := http.ReadResponse(r, nil)
	require.NoError(t, err)
	require.Equal(t, http.StatusSwitchingProtocols, resp.StatusCode)
	require.Equal(t, "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=", resp.Header.Get("Sec-WebSocket-Accept")) // RFC 6455's example
	return &rawConn{conn, r}
}

func newReader(c net.Conn) *bufio.Reader { return bufio.NewReaderSize(c, 1<<16) }

// frame builds a client frame: b0 is FIN, RSV and opcode as sent; masked
// frames get a random key.
func frame(b0 byte, payload []byte, masked bool) []byte {
	var out []byte
	m := byte(0)
	if masked {
		m = 0x80
	}
	switch n := len(payload); {
	case n <= 125:
		out = append(out, b0, m|byte(n))
	case n <= 0xFFFF:
		out = append(out, b0, m|126)
		out = binary.BigEndian.AppendUint16(out, uint16(n))
	default:
		out = append(out, b0, m|127)
		out = binary.BigEndian.AppendUint64(out, uint64(n))
	}
	if !masked {
		return append(out, payload...)
	}
	var key [4]byte
	_, _ = rand.Read(key[:])
	out = append(out, key[:]...)
	for i, c := range payload {
		out = append(out, c^key[i%4])
	}
	return out
}

// Frame-building shorthands: fin+opcode first bytes.
const (
	finText   = 0x81
	finBinary = 0x82
	fragText  = 0x01
	fragCont  = 0x00
	finCont   = 0x80
	finClose  = 0x88
	finPing   = 0x89
	finPong   = 0x8A
)

func closePayload(code int, reason string) []byte {
	return append(binary.BigEndian.AppendUint16(nil, uint16(code)), reason...)
}

// serverFrame is a frame the server sent.
type serverFrame struct {
	b0      byte
	payload []byte
}

func (c closed) String() string { return fmt.Sprintf("%d %q %v", c.code, c.reason, c.err) }

func (f serverFrame) String() string { return fmt.Sprintf("%#x %q", f.b0, f.payload) }

// read reads one server frame; a server frame must be unmasked.
func (rc *rawConn) read() (serverFrame, error) {
	var h [2]byte
	if _, err := io.ReadFull(rc.r, h[:]); err != nil {
		return serverFrame{}, err
	}
	if h[1]&0x80 != 0 {
		return serverFrame{}, fmt.Errorf("masked server frame")
	}
	n := uint64(h[1] & 0x7F)
	switch n {
	case 126:
		var l [2]byte
		if _, err := io.ReadFull(rc.r, l[:]); err != nil {
			return serverFrame{}, err
		}
		n = uint64(binary.BigEndian.Uint16(l[:]))
	case 127:
		var l [8]byte
		if _, err := io.ReadFull(rc.r, l[:]); err != nil {
			return serverFrame{}, err
		}
		n = binary.BigEndian.Uint64(l[:])
	}
	p := make([]byte, n)
	if _, err := io.ReadFull(rc.r, p); err != nil {
		return serverFrame{}, err
	}
	return serverFrame{h[0], p}, nil
}

// closeCode is the code of a server close frame (1005 if empty).
func (f serverFrame) closeCode() int {
	if len(f.payload) < 2 {
		return websocket.CloseNoStatus
	}
	return int(binary.BigEndian.Uint16(f.payload))
}

// expectEOF reads until the server closes the TCP connection and fails on
// any further frame.
func (rc *rawConn) expectEOF(t *testing.T) {
	t.Helper()
	f, err := rc.read()
	if err == nil {
		t.Fatalf("frame %v after the close frame", f)
	}
	if err != io.EOF && !strings.Contains(err.Error(), "reset") {
		t.Fatalf("after the close frame: %v, want EOF", err)
	}
}

func b64key() string {
	var k [16]byte
	_, _ = rand.Read(k[:])
	return base64.StdEncoding.EncodeToString(k[:])
}
