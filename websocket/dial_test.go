package websocket_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	gws "github.com/gorilla/websocket"
	"github.com/stretchr/testify/require"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/internal/testenv"
	"github.com/ringloop/ringloop/loopgroup"
	"github.com/ringloop/ringloop/tasks"
	"github.com/ringloop/ringloop/websocket"
)

// echoSizes are the message sizes echoed: around each length encoding's
// edges, and a megabyte that spans many reads.
var echoSizes = []int{0, 1, 125, 126, 65535, 65536, 1 << 20}

// TestDialEcho: Dial against this package's server: text and binary
// messages from 0 B to 1 MiB, sent on the loop and from another goroutine,
// come back whole; the client's close (4000) reaches the server with its
// reason and is echoed; a close the server starts (4001) reaches the
// client with its reason.
func TestDialEcho(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		e := newEcho()
		addr := serve(t, c, e, nil)
		loop := newLoop(t, c)
		cl := newClient()
		ws := dial(t, loop, "ws://"+addr+"/echo", cl)
		require.Empty(t, ws.Subprotocol())
		for i, n := range echoSizes {
			kind := websocket.Binary
			if i%2 == 0 {
				kind = websocket.Text
			}
			msg := pattern(n, i)
			orig := bytes.Clone(msg)
			require.NoError(t, onLoop(t, ws, func() error { return ws.WriteMessage(kind, msg) }))
			got := cl.next(t)
			require.Equal(t, kind, got.kind)
			require.True(t, bytes.Equal(orig, got.p), "%d bytes on the loop: echo differs", n)
			require.True(t, bytes.Equal(orig, msg), "masking changed the caller's bytes")

			require.NoError(t, ws.WriteMessage(kind, msg)) // off the loop: AsyncWriteMessage
			got = cl.next(t)
			require.True(t, bytes.Equal(orig, got.p), "%d bytes off the loop: echo differs", n)
		}
		require.NoError(t, ws.Ping([]byte("are you there")))
		require.NoError(t, ws.Close(4000, "bye"))
		require.Equal(t, closed{4000, "bye", nil}, e.next(t))
		require.Equal(t, closed{4000, "", nil}, cl.closed(t))

		// The server closes.
		cl = newClient()
		ws = dial(t, loop, "ws://"+addr+"/echo", cl)
		require.NoError(t, ws.WriteMessage(websocket.Text, []byte("close-me")))
		require.Equal(t, closed{4001, "server bye", nil}, cl.closed(t))
		require.Equal(t, closed{4001, "", nil}, e.next(t))
		require.ErrorIs(t, ws.WriteMessage(websocket.Text, []byte("late")), websocket.ErrClosed)
	})
}

// TestDialCompressionOwnServer: with WithCompression on both sides the
// client and the server negotiate permessage-deflate and echo compressible
// and random messages; a server without it answers no extension.
func TestDialCompressionOwnServer(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		for _, serverOn := range []bool{true, false} {
			e := newEcho()
			addr := serve(t, c, e, []websocket.Option{websocket.WithCompression(serverOn)})
			loop := newLoop(t, c)
			cl := newClient()
			ws := dial(t, loop, "ws://"+addr+"/echo", cl, websocket.WithCompression(true))
			require.Equal(t, serverOn, websocket.Deflate(ws))
			for i, msg := range compressionMessages() {
				kind := websocket.Binary
				if i%2 == 0 {
					kind = websocket.Text
				}
				require.NoError(t, ws.WriteMessage(kind, msg))
				got := cl.next(t)
				require.Equal(t, kind, got.kind)
				require.True(t, bytes.Equal(msg, got.p), "message %d", i)
			}
			require.NoError(t, ws.Close(websocket.CloseNormal, ""))
			require.Equal(t, closed{1000, "", nil}, cl.closed(t))
			require.Equal(t, closed{1000, "", nil}, e.next(t))
		}
	})
}

// gorillaServer serves gorilla/websocket's Upgrader on loopback: it echoes
// each message through a 1 KiB writer (so messages over it go back in
// frames of 1 KiB), answers "close-me" with a close (4001), and "ping-me"
// with a ping whose pong it reports on pongs.
func gorillaServer(t *testing.T, compression bool, pongs chan<- string) string {
	srv := &http.Server{Handler: gorillaHandler(compression, pongs)}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return ln.Addr().String()
}

// gorillaHandler is gorillaServer's handler.
func gorillaHandler(compression bool, pongs chan<- string) http.Handler {
	up := gws.Upgrader{EnableCompression: compression, WriteBufferSize: 1024, ReadBufferSize: 1024}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := up.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer ws.Close()
		ws.SetReadLimit(4 << 20)
		ws.SetPongHandler(func(p string) error { pongs <- p; return nil })
		for {
			kind, rd, err := ws.NextReader()
			if err != nil {
				return
			}
			p, err := io.ReadAll(rd)
			if err != nil {
				return
			}
			switch string(p) {
			case "close-me":
				_ = ws.WriteControl(gws.CloseMessage, gws.FormatCloseMessage(4001, "server bye"), time.Now().Add(10*time.Second))
				continue
			case "ping-me":
				_ = ws.WriteControl(gws.PingMessage, []byte("gorilla ping"), time.Now().Add(10*time.Second))
				continue
			}
			wr, err := ws.NextWriter(kind)
			if err != nil {
				return
			}
			_, _ = wr.Write(p)
			if wr.Close() != nil {
				return
			}
		}
	})
}

// TestDialGorilla: Dial against gorilla/websocket's server, with and
// without compression: every size comes back (fragmented in 1 KiB frames
// past 1 KiB, compressed when negotiated), the client answers the server's
// ping with its payload, and closes work both ways.
func TestDialGorilla(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		loop := newLoop(t, c)
		for _, comp := range []bool{false, true} {
			pongs := make(chan string, 4)
			addr := gorillaServer(t, comp, pongs)
			cl := newClient()
			ws := dial(t, loop, "ws://"+addr+"/", cl, websocket.WithCompression(comp))
			require.Equal(t, comp, websocket.Deflate(ws))
			for i, n := range echoSizes {
				kind := websocket.Binary
				if i%2 == 0 {
					kind = websocket.Text
				}
				msg := pattern(n, i)
				require.NoError(t, ws.WriteMessage(kind, msg))
				got := cl.next(t)
				require.Equal(t, kind, got.kind)
				require.True(t, bytes.Equal(msg, got.p), "compression %v, %d bytes: echo differs", comp, n)
			}
			require.NoError(t, ws.WriteMessage(websocket.Text, []byte("ping-me")))
			select {
			case p := <-pongs:
				require.Equal(t, "gorilla ping", p)
			case <-time.After(60 * time.Second):
				t.Fatal("gorilla got no pong")
			}
			require.NoError(t, ws.Close(4000, "bye"))
			require.Equal(t, closed{4000, "", nil}, cl.closed(t), "gorilla echoes the code")

			cl = newClient()
			ws = dial(t, loop, "ws://"+addr+"/", cl, websocket.WithCompression(comp))
			require.NoError(t, ws.WriteMessage(websocket.Text, []byte("close-me")))
			require.Equal(t, closed{4001, "server bye", nil}, cl.closed(t))
		}
	})
}

// TestDialSubprotocol: the server picks the first of its subprotocols the
// client offers, and Subprotocol reports it on both sides.
func TestDialSubprotocol(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		e := newEcho()
		addr := serve(t, c, e, []websocket.Option{websocket.WithSubprotocols("chat.v2", "chat.v1")})
		loop := newLoop(t, c)
		cl := newClient()
		ws := dial(t, loop, "ws://"+addr+"/", cl, websocket.WithSubprotocols("chat.v1", "chat.v2"))
		require.Equal(t, "chat.v2", ws.Subprotocol())
		require.NoError(t, ws.Close(websocket.CloseNormal, ""))
		require.Equal(t, closed{1000, "", nil}, cl.closed(t))
		e.next(t)
	})
}

// TestDialRefused: answers that are not a valid 101 fail Dial with a
// HandshakeError saying the status and what was wrong, OnOpen never runs,
// and the connection is closed.
func TestDialRefused(t *testing.T) {
	cases := []struct {
		name   string
		opts   []websocket.Option
		answer func(req *http.Request) string
		status int
		want   string
	}{
		{"forbidden", nil, func(*http.Request) string {
			return "HTTP/1.1 403 Forbidden\r\nContent-Length: 4\r\n\r\nno!\n"
		}, 403, "403 Forbidden"},
		{"bad accept", nil, func(*http.Request) string {
			return "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n"
		}, 101, "Sec-WebSocket-Accept"},
		{"no upgrade", nil, func(req *http.Request) string {
			return strings.Replace(answer101(req, ""), "Upgrade: websocket\r\n", "", 1)
		}, 101, "Upgrade: websocket missing"},
		{"no connection", nil, func(req *http.Request) string {
			return strings.Replace(answer101(req, ""), "Connection: Upgrade\r\n", "Connection: keep-alive\r\n", 1)
		}, 101, "Connection: upgrade missing"},
		{"unknown extension", []websocket.Option{websocket.WithCompression(true)}, func(req *http.Request) string {
			return answer101(req, "Sec-WebSocket-Extensions: x-webkit-deflate-frame\r\n")
		}, 101, "x-webkit-deflate-frame"},
		{"extension not offered", nil, func(req *http.Request) string {
			return answer101(req, "Sec-WebSocket-Extensions: permessage-deflate; server_no_context_takeover\r\n")
		}, 101, "not offered"},
		{"deflate keeping its context", []websocket.Option{websocket.WithCompression(true)}, func(req *http.Request) string {
			return answer101(req, "Sec-WebSocket-Extensions: permessage-deflate\r\n")
		}, 101, "do not answer the offer"},
		{"deflate limiting the client window", []websocket.Option{websocket.WithCompression(true)}, func(req *http.Request) string {
			return answer101(req, "Sec-WebSocket-Extensions: permessage-deflate; server_no_context_takeover; client_max_window_bits=10\r\n")
		}, 101, "do not answer the offer"},
		{"subprotocol not offered", []websocket.Option{websocket.WithSubprotocols("a", "b")}, func(req *http.Request) string {
			return answer101(req, "Sec-WebSocket-Protocol: c\r\n")
		}, 101, `subprotocol "c" was not offered`},
		{"subprotocol when none offered", nil, func(req *http.Request) string {
			return answer101(req, "Sec-WebSocket-Protocol: a\r\n")
		}, 101, "was not offered"},
		{"not http", nil, func(*http.Request) string {
			return "SSH-2.0-OpenSSH_9.2\r\n\r\n"
		}, 0, "malformed answer"},
		{"head too large", nil, func(*http.Request) string {
			return "HTTP/1.1 101 Switching Protocols\r\nX-Big: " + strings.Repeat("x", 20<<10) + "\r\n\r\n"
		}, 0, "answer head over"},
	}
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		loop := newLoop(t, c)
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				gone := make(chan error, 1)
				addr := rawServer(t, func(conn net.Conn, r *bufio.Reader, req *http.Request) {
					_, _ = io.WriteString(conn, tc.answer(req))
					_, err := r.ReadByte() // the client closes
					gone <- err
				})
				cl := newClient()
				ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
				defer cancel()
				ws, err := websocket.Dial(ctx, loop, "ws://"+addr+"/", cl, tc.opts...)
				require.Nil(t, ws)
				require.ErrorIs(t, err, websocket.ErrHandshake)
				var he *websocket.HandshakeError
				require.ErrorAs(t, err, &he)
				require.Equal(t, tc.status, he.StatusCode, "%v", err)
				require.Contains(t, err.Error(), tc.want)
				err = <-gone // the client closes, with a reset if it left bytes unread
				require.True(t, errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET), "the client closes the connection: %v", err)
				require.Empty(t, cl.opens, "OnOpen after a refused handshake")
				require.Empty(t, cl.closes, "OnClose after a refused handshake")
			})
		}
	})
}

// TestDialEnded: a server that closes before answering, or never answers
// (Timeouts.Handshake), or a context cancelled during the handshake
// fail Dial with the matching error. The combos run in parallel: each
// mostly waits out the handshake timeout.
func TestDialEnded(t *testing.T) {
	testenv.ForEachParallel(t, func(t *testing.T, c testenv.Combo) {
		loop := newLoop(t, c)
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()

		addr := rawServer(t, func(net.Conn, *bufio.Reader, *http.Request) {})
		_, err := websocket.Dial(ctx, loop, "ws://"+addr+"/", newClient())
		require.ErrorIs(t, err, io.EOF)

		gone := make(chan struct{})
		addr = rawServer(t, func(conn net.Conn, r *bufio.Reader, _ *http.Request) {
			_, _ = r.ReadByte()
			close(gone)
		})
		_, err = websocket.Dial(ctx, loop, "ws://"+addr+"/", newClient(), websocket.WithTimeouts(websocket.Timeouts{Handshake: 200 * time.Millisecond}))
		require.ErrorIs(t, err, os.ErrDeadlineExceeded)
		require.ErrorIs(t, err, websocket.ErrTimeout)
		var te interface{ Timeout() bool }
		require.True(t, errors.As(err, &te) && te.Timeout(), "%v", err)
		<-gone

		read := make(chan struct{})
		addr = rawServer(t, func(conn net.Conn, r *bufio.Reader, _ *http.Request) {
			close(read)
			_, _ = r.ReadByte()
		})
		cctx, ccancel := context.WithCancel(ctx)
		go func() { <-read; ccancel() }()
		_, err = websocket.Dial(cctx, loop, "ws://"+addr+"/", newClient())
		require.ErrorIs(t, err, context.Canceled)
	})
}

// TestDialErrors: connect errors are engine.Dial's *net.OpError; bad URLs
// and options are refused before connecting.
func TestDialErrors(t *testing.T) {
	testenv.ForEachBackend(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		loop := newLoop(t, c)
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		addr := ln.Addr().String()
		ln.Close()
		_, err = websocket.Dial(ctx, loop, "ws://"+addr+"/", newClient())
		var oe *net.OpError
		require.ErrorAs(t, err, &oe)
		require.Equal(t, "dial", oe.Op)
		require.Contains(t, err.Error(), "connection refused")

		for url, want := range map[string]string{
			"http://127.0.0.1:1/":    `scheme "http"`,
			"ws:///path":             "no host",
			"ws://u:p@127.0.0.1:1/":  "user info",
			"ws://127.0.0.1:1/#frag": "fragment",
		} {
			_, err := websocket.Dial(ctx, loop, url, newClient())
			require.ErrorContains(t, err, want, url)
		}
		_, err = websocket.Dial(ctx, loop, "ws://127.0.0.1:1/", newClient(), websocket.WithDialConfig(websocket.DialConfig{TLSConfig: &tls.Config{}}))
		require.ErrorContains(t, err, "DialConfig.TLSConfig needs wss://")
		_, err = websocket.Dial(ctx, loop, "ws://127.0.0.1:1/", newClient(), websocket.WithOriginCheck(func(o, h []byte) bool { return true }))
		require.ErrorContains(t, err, "server option")
		_, err = websocket.Dial(ctx, loop, "ws://127.0.0.1:1/", newClient(), websocket.WithDialConfig(websocket.DialConfig{Header: http.Header{"Upgrade": {"h2c"}}}))
		require.ErrorContains(t, err, "set by the handshake")
		_, err = websocket.Dial(ctx, loop, "ws://127.0.0.1:1/", newClient(), websocket.WithSubprotocols("a b"))
		require.ErrorContains(t, err, "not a token")
		_, err = websocket.EngineHandler(newEcho(), websocket.WithDialConfig(websocket.DialConfig{Header: http.Header{"Authorization": {"x"}}}))
		require.ErrorContains(t, err, "Dial option")
		_, err = websocket.Dial(ctx, loop, "ws://127.0.0.1:1/", nil)
		require.Error(t, err)
		done := make(chan error, 1)
		require.NoError(t, loop.Execute(tasks.Func(func() {
			_, err := websocket.Dial(ctx, loop, "ws://127.0.0.1:1/", newClient())
			done <- err
		})))
		require.ErrorContains(t, <-done, "block its own loop")
	})
}

// TestDialBytesAfter101: frames the server sends in the same segment as
// its 101 (a message, a fragmented one, a ping) are the client's first
// events, none lost; the request carries DialConfig.Header's fields.
func TestDialBytesAfter101(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		loop := newLoop(t, c)
		pong := make(chan clientFrame, 1)
		addr := rawServer(t, func(conn net.Conn, r *bufio.Reader, req *http.Request) {
			if req.Header.Get("Origin") != "http://example.test" || req.URL.RequestURI() != "/chat?room=1" {
				t.Errorf("request %v %v", req.URL, req.Header)
			}
			out := []byte(answer101(req, ""))
			out = append(out, frame(finText, []byte("first"), false)...)
			out = append(out, frame(fragText, []byte("fr"), false)...)
			out = append(out, frame(finPing, []byte("p1"), false)...) // between fragments
			out = append(out, frame(finCont, []byte("ag"), false)...)
			out = append(out, frame(finBinary, pattern(70000, 3), false)...)
			if _, err := conn.Write(out); err != nil {
				t.Errorf("raw server: %v", err)
				return
			}
			f, err := readClientFrame(r)
			if err != nil {
				t.Errorf("raw server: %v", err)
				return
			}
			pong <- f
			_, _ = conn.Write(frame(finClose, closePayload(1000, ""), false))
			_, _ = readClientFrame(r)
		})
		cl := newClient()
		dial(t, loop, "ws://"+addr+"/chat?room=1", cl, websocket.WithDialConfig(websocket.DialConfig{Header: http.Header{"Origin": {"http://example.test"}}}))
		require.Equal(t, message{websocket.Text, []byte("first")}, cl.next(t))
		require.Equal(t, message{websocket.Text, []byte("frag")}, cl.next(t))
		m := cl.next(t)
		require.Equal(t, websocket.Binary, m.kind)
		require.True(t, bytes.Equal(pattern(70000, 3), m.p))
		f := <-pong
		require.Equal(t, byte(finPong), f.b0)
		require.True(t, f.masked)
		require.Equal(t, "p1", string(f.payload))
		require.Equal(t, closed{1000, "", nil}, cl.closed(t))
	})
}

// TestDialMasking: at the byte level, every frame the client sends (data
// on and off the loop, compressed or not, ping, pong, close) is masked,
// each with a key of its own, and unmasks to what was sent.
func TestDialMasking(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		loop := newLoop(t, c)
		frames := make(chan clientFrame, 16)
		addr := rawServer(t, func(conn net.Conn, r *bufio.Reader, req *http.Request) {
			_, _ = io.WriteString(conn, answer101(req, "Sec-WebSocket-Extensions: permessage-deflate; server_no_context_takeover; client_no_context_takeover\r\n"))
			for {
				f, err := readClientFrame(r)
				if err != nil {
					close(frames)
					return
				}
				frames <- f
				switch f.b0 {
				case finText:
					if string(f.payload) == "ping me" {
						_, _ = conn.Write(frame(finPing, []byte("server ping"), false))
					}
				case finClose:
					_, _ = conn.Write(frame(finClose, f.payload, false))
				}
			}
		})
		cl := newClient()
		ws := dial(t, loop, "ws://"+addr+"/", cl, websocket.WithCompression(true))
		big := pattern(70000, 1)
		require.NoError(t, onLoop(t, ws, func() error { return ws.WriteMessage(websocket.Text, []byte("hello")) }))
		require.NoError(t, onLoop(t, ws, func() error { return ws.WriteMessage(websocket.Binary, big) }))
		require.NoError(t, ws.WriteMessage(websocket.Binary, []byte("async")))
		require.NoError(t, ws.Ping([]byte("client ping")))
		require.NoError(t, ws.WriteMessage(websocket.Text, []byte("ping me")))
		var got []clientFrame
		for f := range frames {
			got = append(got, f)
			if f.b0 == finPong {
				break // the server's ping was answered: the close goes after it
			}
		}
		require.NoError(t, ws.Close(4002, "done"))
		for f := range frames {
			got = append(got, f)
		}
		require.Len(t, got, 7, "%v", got)
		keys := map[[4]byte]bool{}
		for _, f := range got {
			require.True(t, f.masked, "unmasked frame %v", f)
			keys[f.key] = true
		}
		require.Len(t, keys, len(got), "a masking key was used twice")
		require.Equal(t, clientFrame{b0: finText, masked: true, key: got[0].key, payload: []byte("hello")}, got[0])
		require.Equal(t, byte(finBinary|0x40), got[1].b0, "compressed (RSV1)")
		require.True(t, bytes.Equal(big, inflated(t, got[1].payload)))
		require.Equal(t, "async", string(got[2].payload))
		require.Equal(t, byte(finPing), got[3].b0)
		require.Equal(t, "client ping", string(got[3].payload))
		require.Equal(t, "ping me", string(got[4].payload))
		require.Equal(t, byte(finPong), got[5].b0)
		require.Equal(t, "server ping", string(got[5].payload))
		require.Equal(t, byte(finClose), got[6].b0)
		require.Equal(t, closePayload(4002, "done"), got[6].payload)
		require.Equal(t, closed{4002, "done", nil}, cl.closed(t))
	})
}

// TestDialMaskedServerFrame: a masked frame from the server fails the
// connection with 1002 (RFC 6455 §5.1): the client's close frame says so
// and OnClose reports a protocol error.
func TestDialMaskedServerFrame(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		loop := newLoop(t, c)
		got := make(chan clientFrame, 1)
		addr := rawServer(t, func(conn net.Conn, r *bufio.Reader, req *http.Request) {
			_, _ = io.WriteString(conn, answer101(req, ""))
			_, _ = conn.Write(frame(finText, []byte("masked"), true))
			f, err := readClientFrame(r)
			if err != nil {
				t.Errorf("raw server: %v", err)
			}
			got <- f
			_, _ = r.ReadByte()
		})
		cl := newClient()
		dial(t, loop, "ws://"+addr+"/", cl)
		f := <-got
		require.Equal(t, byte(finClose), f.b0)
		require.Equal(t, closePayload(websocket.CloseProtocolError, ""), f.payload)
		cc := cl.closed(t)
		require.Equal(t, websocket.CloseProtocolError, cc.code)
		require.ErrorIs(t, cc.err, websocket.ErrProtocol)
		require.Contains(t, cc.err.Error(), "masked server frame")
		require.Empty(t, cl.msgs)
	})
}

// TestDialGroup: Dial takes a group and each connection goes to the loop
// the group's chooser gives, every loop of the group serving some.
func TestDialGroup(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		e := newEcho()
		addr := serve(t, c, e, nil)
		g, err := loopgroup.New(loopgroup.WithLoops(2), loopgroup.WithEngineOptions(c.Options()...))
		require.NoError(t, err)
		t.Cleanup(func() { require.NoError(t, g.Close()) })
		used := map[*engine.Loop]bool{}
		for range 4 {
			cl := newClient()
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			ws, err := websocket.Dial(ctx, g, "ws://"+addr+"/", cl)
			cancel()
			require.NoError(t, err)
			<-cl.opens
			used[ws.Conn().Loop()] = true
			require.NoError(t, ws.WriteMessage(websocket.Text, []byte("hi")))
			require.Equal(t, "hi", string(cl.next(t).p))
			require.NoError(t, ws.Close(websocket.CloseNormal, ""))
			require.Equal(t, closed{1000, "", nil}, cl.closed(t))
			e.next(t)
		}
		require.Len(t, used, 2, "every loop of the group dialed")
	})
}
