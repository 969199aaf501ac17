package websocket_test

import (
	"bytes"
	"compress/flate"
	"context"
	"crypto/rand"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	coder "github.com/coder/websocket"
	gws "github.com/gorilla/websocket"
	"github.com/stretchr/testify/require"

	"github.com/ringloop/ringloop/internal/testenv"
	"github.com/ringloop/ringloop/websocket"
)

// compressionMessages are echoed compressed and not: empty, under the
// compression threshold, compressible text, random bytes (deflate makes
// them larger), and a compressible megabyte.
func compressionMessages() [][]byte {
	random := make([]byte, 64<<10)
	_, _ = rand.Read(random)
	return [][]byte{
		nil,
		[]byte("short"),
		[]byte(strings.Repeat("hello, compressed world. ", 200)),
		random,
		bytes.Repeat([]byte("0123456789abcdef"), 1<<16),
	}
}

// TestCompressionGorilla: gorilla's client with EnableCompression
// negotiates permessage-deflate (no context takeover both ways) and gets
// every message back, whole and fragmented, compressed and not.
func TestCompressionGorilla(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		e := newEcho()
		addr := serve(t, c, e, []websocket.Option{websocket.WithCompression(true)})
		d := gws.Dialer{HandshakeTimeout: 30 * time.Second, EnableCompression: true}
		ws, resp, err := d.Dial("ws://"+addr+"/echo", nil)
		require.NoError(t, err)
		defer ws.Close()
		require.Equal(t, "permessage-deflate; server_no_context_takeover; client_no_context_takeover", resp.Header.Get("Sec-WebSocket-Extensions"))
		_ = ws.SetReadDeadline(time.Now().Add(60 * time.Second))
		for i, msg := range compressionMessages() {
			kind := gws.BinaryMessage
			if i%2 == 0 {
				kind = gws.TextMessage
			}
			for _, compress := range []bool{true, false} {
				ws.EnableWriteCompression(compress)
				require.NoError(t, ws.WriteMessage(kind, msg))
				gotKind, got, err := ws.ReadMessage()
				require.NoError(t, err)
				require.Equal(t, kind, gotKind)
				require.True(t, bytes.Equal(msg, got), "message %d (compressed %v): %d bytes back, want %d", i, compress, len(got), len(msg))

				w, err := ws.NextWriter(kind) // frames of gorilla's buffer size
				require.NoError(t, err)
				_, err = w.Write(msg)
				require.NoError(t, err)
				require.NoError(t, w.Close())
				_, got, err = ws.ReadMessage()
				require.NoError(t, err)
				require.True(t, bytes.Equal(msg, got), "fragmented message %d (compressed %v)", i, compress)
			}
		}
		require.NoError(t, ws.WriteMessage(gws.CloseMessage, gws.FormatCloseMessage(1000, "")))
		_, _, err = ws.ReadMessage()
		var ce *gws.CloseError
		require.True(t, errors.As(err, &ce), "%v", err)
		require.Equal(t, closed{1000, "", nil}, e.next(t))
	})
}

// TestCompressionCoder: coder/websocket's client, which keeps contexts when
// allowed, accepts the server's answer in both of its compression modes and
// gets every message back.
func TestCompressionCoder(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		for _, mode := range []coder.CompressionMode{coder.CompressionContextTakeover, coder.CompressionNoContextTakeover} {
			testenv.CheckLeaks(t)
			e := newEcho()
			addr := serve(t, c, e, []websocket.Option{websocket.WithCompression(true)})
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			ws, resp, err := coder.Dial(ctx, "ws://"+addr+"/echo", &coder.DialOptions{CompressionMode: mode, CompressionThreshold: 1})
			require.NoError(t, err)
			require.Contains(t, resp.Header.Get("Sec-WebSocket-Extensions"), "permessage-deflate")
			ws.SetReadLimit(4 << 20)
			for i, msg := range compressionMessages() {
				kind := coder.MessageBinary
				if i%2 == 0 {
					kind = coder.MessageText
				}
				for range 2 { // a second time: a context kept would differ
					require.NoError(t, ws.Write(ctx, kind, msg))
					gotKind, got, err := ws.Read(ctx)
					require.NoError(t, err)
					require.Equal(t, kind, gotKind)
					require.True(t, bytes.Equal(msg, got), "mode %v message %d", mode, i)
				}
			}
			require.NoError(t, ws.Close(coder.StatusNormalClosure, ""))
			require.Equal(t, closed{1000, "", nil}, e.next(t))
			cancel()
		}
	})
}

// deflated compresses p as a permessage-deflate payload.
func deflated(t *testing.T, p []byte) []byte {
	var b bytes.Buffer
	fw, err := flate.NewWriter(&b, flate.BestCompression)
	require.NoError(t, err)
	_, err = fw.Write(p)
	require.NoError(t, err)
	require.NoError(t, fw.Flush())
	return bytes.TrimSuffix(b.Bytes(), []byte{0, 0, 0xff, 0xff})
}

// dialDeflate opens a raw connection offering ext.
func dialDeflate(t *testing.T, addr, ext string) (*rawConn, string) {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, 10*time.Second)
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close() })
	_ = conn.SetDeadline(time.Now().Add(60 * time.Second))
	_, err = io.WriteString(conn, "GET /ws HTTP/1.1\r\nHost: a\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"+
		"Sec-WebSocket-Key: "+b64key()+"\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Extensions: "+ext+"\r\n\r\n")
	require.NoError(t, err)
	r := newReader(conn)
	resp, err := http.ReadResponse(r, nil)
	require.NoError(t, err)
	require.Equal(t, http.StatusSwitchingProtocols, resp.StatusCode)
	return &rawConn{conn, r}, resp.Header.Get("Sec-WebSocket-Extensions")
}

// TestCompressionLimits: a raw client's compressed frames: a large message
// comes back compressed (RSV1) and inflates to itself; a compression bomb
// (16 MiB of zeros in a few KB), whole or fragmented, closes with 1009
// under a 1 MiB limit; RSV1 on a continuation frame is 1002, bytes that are
// not deflate are 1007, and RSV1 without the extension is 1002.
func TestCompressionLimits(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		e := newEcho()
		opts := []websocket.Option{websocket.WithCompression(true), websocket.WithMaxMessageSize(1 << 20)}
		addr := serve(t, c, e, opts)

		rc, ext := dialDeflate(t, addr, "permessage-deflate; client_max_window_bits")
		require.Equal(t, "permessage-deflate; server_no_context_takeover; client_no_context_takeover", ext)
		msg := bytes.Repeat([]byte("abcdefgh"), 64<<10) // 512 KiB
		_, err := rc.Write(frame(0xC2, deflated(t, msg), true))
		require.NoError(t, err)
		f, err := rc.read()
		require.NoError(t, err)
		require.Equal(t, byte(0xC2), f.b0, "FIN, RSV1, binary")
		got, err := io.ReadAll(flate.NewReader(io.MultiReader(bytes.NewReader(f.payload), bytes.NewReader([]byte{0, 0, 0xff, 0xff, 1, 0, 0, 0xff, 0xff}))))
		require.NoError(t, err)
		require.True(t, bytes.Equal(msg, got))

		bomb := deflated(t, make([]byte, 16<<20))
		require.Less(t, len(bomb), 64<<10)
		for _, frames := range [][][]byte{
			{frame(0xC2, bomb, true)},
			{frame(0x42, bomb[:len(bomb)/2], true), frame(0x80, bomb[len(bomb)/2:], true)},
		} {
			rc, _ := dialDeflate(t, addr, "permessage-deflate")
			for _, fr := range frames {
				_, err := rc.Write(fr)
				require.NoError(t, err)
			}
			f, err := rc.read()
			require.NoError(t, err)
			require.Equal(t, websocket.CloseTooBig, f.closeCode())
			rc.expectEOF(t)
			cl := e.next(t)
			require.Equal(t, websocket.CloseTooBig, cl.code)
			require.ErrorIs(t, cl.err, websocket.ErrProtocol)
		}

		for _, tc := range []struct {
			frames [][]byte
			code   int
		}{
			{[][]byte{frame(0x42, deflated(t, []byte("a")), true), frame(0xC0, nil, true)}, websocket.CloseProtocolError},
			{[][]byte{frame(0xC1, []byte{0xff, 0xff, 0xff, 0xff}, true)}, websocket.CloseInvalidPayload},
			{[][]byte{frame(0xC1, deflated(t, []byte{0xff, 0xfe}), true)}, websocket.CloseInvalidPayload},
			{[][]byte{frame(0xC9, nil, true)}, websocket.CloseProtocolError},
		} {
			rc, _ := dialDeflate(t, addr, "permessage-deflate")
			for _, fr := range tc.frames {
				_, err := rc.Write(fr)
				require.NoError(t, err)
			}
			f, err := rc.read()
			require.NoError(t, err)
			require.Equal(t, tc.code, f.closeCode())
			require.Equal(t, tc.code, e.next(t).code)
		}

		plain := dialRaw(t, addr) // no offer: RSV1 is refused
		_, err = plain.Write(frame(0xC1, deflated(t, []byte("hi")), true))
		require.NoError(t, err)
		f, err = plain.read()
		require.NoError(t, err)
		require.Equal(t, websocket.CloseProtocolError, f.closeCode())
		require.Equal(t, websocket.CloseProtocolError, e.next(t).code)
	})
}

// TestCompressionNegotiation: which offers the server accepts. It declines
// a limited server window (compress/flate deflates with 32 KB), unknown or
// repeated parameters and bad values, takes the first offer it can, and
// answers nothing when compression is off.
func TestCompressionNegotiation(t *testing.T) {
	testenv.ForEachBackend(t, func(t *testing.T, c testenv.Combo) { negotiate(t, c) })
}

func negotiate(t *testing.T, c testenv.Combo) {
	on := serve(t, c, newEcho(), []websocket.Option{websocket.WithCompression(true)})
	off := serve(t, c, newEcho(), nil)
	const answer = "permessage-deflate; server_no_context_takeover; client_no_context_takeover"
	for offer, want := range map[string]string{
		"permessage-deflate":                                                         answer,
		"permessage-deflate; server_max_window_bits=15":                              answer,
		`permessage-deflate; client_max_window_bits="12"`:                            answer,
		"permessage-deflate; server_max_window_bits=10":                              "",
		"permessage-deflate; server_max_window_bits":                                 "",
		"permessage-deflate; client_max_window_bits=16":                              "",
		"permessage-deflate; server_no_context_takeover=1":                           "",
		"permessage-deflate; client_no_context_takeover; client_no_context_takeover": "",
		"permessage-deflate; mystery":                                                "",
		"x-webkit-deflate-frame":                                                     "",
		"permessage-deflate; server_max_window_bits=9, permessage-deflate":           answer,
	} {
		_, got := dialDeflate(t, on, offer)
		require.Equal(t, want, got, "offer %q", offer)
	}
	_, got := dialDeflate(t, off, "permessage-deflate")
	require.Equal(t, "", got)
}
