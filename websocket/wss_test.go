package websocket_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	gws "github.com/gorilla/websocket"
	"github.com/stretchr/testify/require"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/httpserver"
	"github.com/ringloop/ringloop/internal/testenv"
	"github.com/ringloop/ringloop/loopgroup"
	"github.com/ringloop/ringloop/looptls"
	"github.com/ringloop/ringloop/websocket"
)

// wss tests: the same connections as over TCP, with TLS from package
// looptls under them on the loop.

// serverTLS is a configuration for 127.0.0.1 signed by p.
func serverTLS(t *testing.T, p *testenv.PKI) *tls.Config {
	return &tls.Config{Certificates: []tls.Certificate{p.Leaf(t, "server", "127.0.0.1", "localhost")}}
}

// serveTLS runs h behind UpgradeFast on an HTTPS server (ListenTLS) on a loop
// of the combo and returns its address.
func serveTLS(t *testing.T, c testenv.Combo, p *testenv.PKI, h websocket.Handler, opts []websocket.Option, conn ...engine.ConnOption) string {
	t.Helper()
	s, err := httpserver.NewFast(httpserver.HandlerFunc(func(w *httpserver.Response, r *httpserver.Request) {
		_ = websocket.UpgradeFast(w, r, h, opts...)
	}), httpserver.WithTLSConfig(serverTLS(t, p)))
	require.NoError(t, err)
	loop, err := engine.New(c.Options()...)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, loop.Close()) })
	a, err := s.ListenTLS(loop, "tcp", "127.0.0.1:0", "", "", loopgroup.WithConnOptions(conn...))
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.Close()) })
	return a.String()
}

// eofConn is a client's TCP connection that records whether a read
// returned the end of the stream: crypto/tls returns io.EOF for a peer's
// close_notify without reading on, and also for a bare FIN at a record
// boundary, which this tells apart.
type eofConn struct {
	net.Conn
	eof atomic.Bool
}

func (c *eofConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if err == io.EOF {
		c.eof.Store(true)
	}
	return n, err
}

// dialGorillaTLS dials addr with gorilla's client over TLS trusting p, and
// returns the TCP connection under it too.
func dialGorillaTLS(t *testing.T, p *testenv.PKI, addr string, compression bool) (*gws.Conn, *eofConn) {
	t.Helper()
	var raw *eofConn
	d := gws.Dialer{
		HandshakeTimeout:  30 * time.Second,
		EnableCompression: compression,
		TLSClientConfig:   &tls.Config{RootCAs: p.Pool},
		NetDialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			raw = &eofConn{Conn: c}
			return raw, nil
		},
	}
	ws, resp, err := d.Dial("wss://"+addr+"/echo", nil)
	require.NoError(t, err)
	require.Equal(t, 101, resp.StatusCode)
	t.Cleanup(func() { ws.Close() })
	_ = ws.SetReadDeadline(time.Now().Add(60 * time.Second))
	return ws, raw
}

// expectCloseNotify reads what follows the close frame: the server's
// close_notify (io.EOF from crypto/tls with the TCP stream not yet at its
// end), not a bare FIN.
func expectCloseNotify(t *testing.T, ws *gws.Conn, raw *eofConn) {
	t.Helper()
	tc := ws.UnderlyingConn().(*tls.Conn)
	var b [16]byte
	n, err := tc.Read(b[:])
	require.Zero(t, n, "bytes after the close frame")
	require.ErrorIs(t, err, io.EOF)
	require.False(t, raw.eof.Load(), "the server closed TCP without close_notify")
}

// echoGorilla sends text and binary messages from 0 B to 1 MiB, whole and
// in 1000-byte fragments, and requires each back.
func echoGorilla(t *testing.T, ws *gws.Conn) {
	t.Helper()
	for i, n := range echoSizes {
		kind := gws.BinaryMessage
		if i%2 == 0 {
			kind = gws.TextMessage
		}
		msg := pattern(n, i)
		require.NoError(t, ws.WriteMessage(kind, msg))
		gotKind, got, err := ws.ReadMessage()
		require.NoError(t, err)
		require.Equal(t, kind, gotKind)
		require.True(t, bytes.Equal(msg, got), "message %d: %d bytes back, want %d", i, len(got), n)

		w, err := ws.NextWriter(kind)
		require.NoError(t, err)
		for off := 0; off < n; off += 1000 {
			_, err = w.Write(msg[off:min(n, off+1000)])
			require.NoError(t, err)
		}
		require.NoError(t, w.Close())
		_, got, err = ws.ReadMessage()
		require.NoError(t, err)
		require.True(t, bytes.Equal(msg, got), "fragmented message %d: %d bytes back, want %d", i, len(got), n)
	}
}

// closeGorilla closes with 4000 and requires the echo, then close_notify,
// and the server's OnClose with the client's code.
func closeGorilla(t *testing.T, ws *gws.Conn, raw *eofConn, e *echo) {
	t.Helper()
	require.NoError(t, ws.WriteMessage(gws.CloseMessage, gws.FormatCloseMessage(4000, "client bye")))
	_, _, err := ws.ReadMessage()
	var ce *gws.CloseError
	require.True(t, errors.As(err, &ce), "read after close: %v", err)
	require.Equal(t, 4000, ce.Code)
	expectCloseNotify(t, ws, raw)
	require.Equal(t, closed{4000, "client bye", nil}, e.next(t))
}

// TestWSSGorillaEcho: gorilla's client over wss gets back text and binary
// messages from 0 B to 1 MiB, whole and fragmented, and its ping's pong;
// its close (4000) is echoed and followed by close_notify, and OnClose
// sees it. A close the server starts (4001) works the same way round, and
// the server's Conn tells the TLS state.
func TestWSSGorillaEcho(t *testing.T) {
	p := testenv.NewPKI(t)
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		e := &tlsEcho{echo: newEcho(), states: make(chan *tls.ConnectionState, 4)}
		addr := serveTLS(t, c, p, e, nil)
		ws, raw := dialGorillaTLS(t, p, addr, false)
		st := <-e.states
		require.NotNil(t, st, "looptls.State tells the TLS state")
		require.True(t, st.HandshakeComplete)
		echoGorilla(t, ws)

		pongs := make(chan string, 1)
		ws.SetPongHandler(func(p string) error { pongs <- p; return nil })
		require.NoError(t, ws.WriteControl(gws.PingMessage, []byte("are you there"), time.Now().Add(10*time.Second)))
		require.NoError(t, ws.WriteMessage(gws.TextMessage, []byte("after ping")))
		_, got, err := ws.ReadMessage()
		require.NoError(t, err)
		require.Equal(t, "after ping", string(got))
		require.Equal(t, "are you there", <-pongs)
		closeGorilla(t, ws, raw, e.echo)

		ws, raw = dialGorillaTLS(t, p, addr, false)
		<-e.states
		require.NoError(t, ws.WriteMessage(gws.TextMessage, []byte("close-me")))
		_, _, err = ws.ReadMessage() // gorilla echoes the close
		var ce *gws.CloseError
		require.True(t, errors.As(err, &ce), "read after close: %v", err)
		require.Equal(t, 4001, ce.Code)
		require.Equal(t, "server bye", ce.Text)
		expectCloseNotify(t, ws, raw)
		require.Equal(t, closed{4001, "", nil}, e.next(t))
	})
}

// tlsEcho is echo reporting each connection's TLS state.
type tlsEcho struct {
	*echo
	states chan *tls.ConnectionState
}

func (e *tlsEcho) OnOpen(c *websocket.Conn) {
	var st *tls.ConnectionState
	if s, ok := looptls.State(c.Conn()); ok {
		st = &s
	}
	e.states <- st
}

// TestWSSCompressionGorilla: permessage-deflate over wss, compressed and
// not, whole and fragmented.
func TestWSSCompressionGorilla(t *testing.T) {
	p := testenv.NewPKI(t)
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		e := newEcho()
		addr := serveTLS(t, c, p, e, []websocket.Option{websocket.WithCompression(true)})
		ws, raw := dialGorillaTLS(t, p, addr, true)
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
			}
		}
		closeGorilla(t, ws, raw, e)
	})
}

// TestWSSEngineHandler: EngineHandler on an engine listener behind
// looptls.Server reads the handshake itself; the first frame sent right
// behind the request is served, and gorilla's client echoes over it.
func TestWSSEngineHandler(t *testing.T) {
	p := testenv.NewPKI(t)
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		e := newEcho()
		wh, err := websocket.EngineHandler(e, websocket.WithCompression(true))
		require.NoError(t, err)
		loop := newLoop(t, c)
		ln, err := engine.Listen(loop, "tcp", "127.0.0.1:0", looptls.Server(wh, serverTLS(t, p)))
		require.NoError(t, err)
		t.Cleanup(func() { _ = ln.Close() })
		addr := ln.Addr().String()

		ws, raw := dialGorillaTLS(t, p, addr, true)
		echoGorilla(t, ws)
		closeGorilla(t, ws, raw, e)

		// A request and a frame in one write.
		conn, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: p.Pool})
		require.NoError(t, err)
		defer conn.Close()
		_ = conn.SetDeadline(time.Now().Add(60 * time.Second))
		req := "GET / HTTP/1.1\r\nHost: a\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
			"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
		_, err = conn.Write(append([]byte(req), frame(finText, []byte("early"), true)...))
		require.NoError(t, err)
		rc := &rawConn{conn, nil}
		rc.r = newReader(conn)
		resp, err := http.ReadResponse(rc.r, nil)
		require.NoError(t, err)
		require.Equal(t, 101, resp.StatusCode)
		f, err := rc.read()
		require.NoError(t, err)
		require.Equal(t, "early", string(f.payload))

		// Not a WebSocket request: refused in plaintext inside TLS.
		conn2, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: p.Pool})
		require.NoError(t, err)
		defer conn2.Close()
		_ = conn2.SetDeadline(time.Now().Add(60 * time.Second))
		_, err = io.WriteString(conn2, "POST / HTTP/1.1\r\nHost: a\r\n\r\n")
		require.NoError(t, err)
		resp, err = http.ReadResponse(newReader(conn2), nil)
		require.NoError(t, err)
		require.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode)
	})
}

// wssClient is the TLS configuration trusting p.
func wssClient(p *testenv.PKI) websocket.Option {
	return websocket.WithDialConfig(websocket.DialConfig{TLSConfig: &tls.Config{RootCAs: p.Pool}})
}

// TestWSSDial: Dial wss:// against this package's server over HTTPS, with
// and without compression: every size comes back, sent on the loop and
// off it; closes work both ways. ServerName comes from the URL's host
// (127.0.0.1, in the certificate; no SNI is sent for an IP); a server the configuration does not
// trust fails the dial with looptls.ErrHandshake.
func TestWSSDial(t *testing.T) {
	p := testenv.NewPKI(t)
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		e := newEcho()
		addr := serveTLS(t, c, p, e, []websocket.Option{websocket.WithCompression(true)})
		loop := newLoop(t, c)
		for _, comp := range []bool{false, true} {
			cl := newClient()
			ws := dial(t, loop, "wss://"+addr+"/echo", cl, wssClient(p), websocket.WithCompression(comp))
			require.Equal(t, comp, websocket.Deflate(ws))
			st, ok := looptls.State(ws.Conn())
			require.True(t, ok)
			// Verified against 127.0.0.1, the URL's host: crypto/tls refuses a
			// client configuration with neither ServerName nor
			// InsecureSkipVerify.
			require.NotEmpty(t, st.VerifiedChains)
			for i, n := range echoSizes {
				kind := websocket.Binary
				if i%2 == 0 {
					kind = websocket.Text
				}
				msg := pattern(n, i)
				require.NoError(t, onLoop(t, ws, func() error { return ws.WriteMessage(kind, msg) }))
				got := cl.next(t)
				require.Equal(t, kind, got.kind)
				require.True(t, bytes.Equal(msg, got.p), "%d bytes on the loop: echo differs", n)
				require.NoError(t, ws.WriteMessage(kind, msg)) // off the loop
				got = cl.next(t)
				require.True(t, bytes.Equal(msg, got.p), "%d bytes off the loop: echo differs", n)
			}
			require.NoError(t, ws.Close(4000, "bye"))
			require.Equal(t, closed{4000, "bye", nil}, e.next(t))
			require.Equal(t, closed{4000, "", nil}, cl.closed(t))

			cl = newClient()
			ws = dial(t, loop, "wss://"+addr+"/echo", cl, wssClient(p), websocket.WithCompression(comp))
			require.NoError(t, ws.WriteMessage(websocket.Text, []byte("close-me")))
			require.Equal(t, closed{4001, "server bye", nil}, cl.closed(t))
			require.Equal(t, closed{4001, "", nil}, e.next(t))
		}

		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		_, err := websocket.Dial(ctx, loop, "wss://"+addr+"/echo", newClient())
		require.ErrorIs(t, err, looptls.ErrHandshake)
		var ua x509.UnknownAuthorityError
		require.ErrorAs(t, err, &ua)
		_, err = websocket.Dial(ctx, loop, "wss://"+addr+"/echo", newClient(),
			websocket.WithDialConfig(websocket.DialConfig{TLSConfig: &tls.Config{RootCAs: p.Pool, ServerName: "elsewhere.example"}}))
		require.ErrorIs(t, err, looptls.ErrHandshake)
		var he x509.HostnameError
		require.ErrorAs(t, err, &he)
	})
}

// TestWSSDialGorilla: Dial wss:// against gorilla's server on net/http's
// TLS server (httptest.NewTLSServer), with and without compression.
func TestWSSDialGorilla(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		loop := newLoop(t, c)
		for _, comp := range []bool{false, true} {
			pongs := make(chan string, 4)
			srv := httptest.NewTLSServer(gorillaHandler(comp, pongs))
			pool := x509.NewCertPool()
			pool.AddCert(srv.Certificate())
			opts := []websocket.Option{websocket.WithCompression(comp), websocket.WithDialConfig(websocket.DialConfig{TLSConfig: &tls.Config{RootCAs: pool}})}
			url := "wss://" + srv.Listener.Addr().String() + "/"
			cl := newClient()
			ws := dial(t, loop, url, cl, opts...)
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
			ws = dial(t, loop, url, cl, opts...)
			require.NoError(t, ws.WriteMessage(websocket.Text, []byte("close-me")))
			require.Equal(t, closed{4001, "server bye", nil}, cl.closed(t))
			srv.Close()
		}
	})
}

// TestWSSNodeClient: ws's client (under node) over wss, trusting the test
// CA (NODE_EXTRA_CA_CERTS): TestNodeClient's exchanges.
func TestWSSNodeClient(t *testing.T) {
	node, nodePath := nodeWS(t)
	p := testenv.NewPKI(t)
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		e := newEcho()
		addr := serveTLS(t, c, p, e, []websocket.Option{websocket.WithCompression(true)})
		runScript(t, []string{"NODE_PATH=" + nodePath, "NODE_EXTRA_CA_CERTS=" + p.CAFile}, node,
			"testdata/ws_client.js", "wss://"+addr+"/plain", "wss://"+addr+"/deflate")
		require.Equal(t, closed{4000, "node bye", nil}, e.next(t))
		require.Equal(t, closed{4000, "node bye", nil}, e.next(t))
	})
}

// TestWSSIdleGoroutines: 200 idle wss connections, dialed by this package
// and served by it (400 TLS connections on two loops), add no goroutine
// once their handshakes are done, and every one still echoes.
func TestWSSIdleGoroutines(t *testing.T) {
	const conns = 200
	p := testenv.NewPKI(t)
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		e := newEcho()
		addr := serveTLS(t, c, p, e, nil)
		loop := newLoop(t, c)
		first := newClient()
		dial(t, loop, "wss://"+addr+"/", first, wssClient(p)) // lazily started parts start
		base := runtime.NumGoroutine()
		cls := make([]*client, conns)
		wss := make([]*websocket.Conn, conns)
		for i := range cls {
			cls[i] = newClient()
			wss[i] = dial(t, loop, "wss://"+addr+"/", cls[i], wssClient(p))
		}
		var n int
		testenv.Eventually(t, 60*time.Second, "the handshake goroutines to end", func() bool {
			n = runtime.NumGoroutine()
			return n-base <= 5
		})
		t.Logf("%d wss connections (both ends): %d goroutines, %d before", conns, n, base)
		for i, ws := range wss {
			require.NoError(t, ws.WriteMessage(websocket.Binary, []byte{byte(i)}))
		}
		for i, cl := range cls {
			require.Equal(t, []byte{byte(i)}, cl.next(t).p)
		}
	})
}

// TestWSSShutdownGoingAway: when the loop shuts down, a wss client reads
// what OnShutdown sent, then the 1001 close frame, then close_notify;
// behind UpgradeFast (ListenTLS) and behind EngineHandler. OnClose gets 1001 and
// engine.ErrShutdown.
func TestWSSShutdownGoingAway(t *testing.T) {
	p := testenv.NewPKI(t)
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		for _, via := range []string{"UpgradeFast", "EngineHandler"} {
			t.Run(via, func(t *testing.T) {
				testenv.CheckLeaks(t)
				e := newEcho()
				h := lastWords{e}
				loop, err := engine.New(c.Options()...)
				require.NoError(t, err)
				var addr string
				if via == "EngineHandler" {
					wh, err := websocket.EngineHandler(h)
					require.NoError(t, err)
					ln, err := engine.Listen(loop, "tcp", "127.0.0.1:0", looptls.Server(wh, serverTLS(t, p)))
					require.NoError(t, err)
					addr = ln.Addr().String()
				} else {
					s, err := httpserver.NewFast(httpserver.HandlerFunc(func(w *httpserver.Response, r *httpserver.Request) {
						_ = websocket.UpgradeFast(w, r, h)
					}), httpserver.WithTLSConfig(serverTLS(t, p)))
					require.NoError(t, err)
					a, err := s.ListenTLS(loop, "tcp", "127.0.0.1:0", "", "")
					require.NoError(t, err)
					t.Cleanup(func() { _ = s.Close() })
					addr = a.String()
				}
				ws, raw := dialGorillaTLS(t, p, addr, false)
				require.NoError(t, ws.WriteMessage(gws.TextMessage, []byte("hello")))
				_, got, err := ws.ReadMessage()
				require.NoError(t, err)
				require.Equal(t, "hello", string(got))

				require.NoError(t, loop.Close())
				_, got, err = ws.ReadMessage()
				require.NoError(t, err)
				require.Equal(t, "last words", string(got))
				_, _, err = ws.ReadMessage()
				var ce *gws.CloseError
				require.True(t, errors.As(err, &ce), "read after the shutdown: %v", err)
				require.Equal(t, websocket.CloseGoingAway, ce.Code)
				expectCloseNotify(t, ws, raw)
				cl := e.next(t)
				require.Equal(t, websocket.CloseGoingAway, cl.code)
				require.ErrorIs(t, cl.err, engine.ErrShutdown)
			})
		}
	})
}

// TestWSSSlowConsumer: TestSlowConsumer over wss, where the watermarks
// count ciphertext: a client that sends and does not read is paused
// (PauseReading) and gets every echo once it reads; CloseSlow drops it
// with 1008.
func TestWSSSlowConsumer(t *testing.T) {
	p := testenv.NewPKI(t)
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		const n, size = 256, 16 << 10
		msg := bytes.Repeat([]byte("s"), size)
		wm := engine.WithBufferLimits(engine.BufferLimits{LowWatermark: 16 << 10, HighWatermark: 64 << 10})
		buf := engine.WithSocketOptions(engine.SocketOptions{SendBuffer: 16 << 10, RecvBuffer: 16 << 10})

		e := newEcho()
		ws, _ := dialGorillaTLS(t, p, serveTLS(t, c, p, e, nil, wm, buf), false)
		sent := make(chan error, 1)
		go func() {
			for range n {
				if err := ws.WriteMessage(gws.BinaryMessage, msg); err != nil {
					sent <- err
					return
				}
			}
			sent <- nil
		}()
		select {
		case w := <-e.writable:
			require.False(t, w)
		case <-time.After(30 * time.Second):
			t.Fatal("the server never turned unwritable")
		}
		for i := range n {
			_, got, err := ws.ReadMessage()
			if err != nil {
				t.Fatalf("echo %d: %v; server: %v", i, err, e.next(t))
			}
			require.Len(t, got, size)
		}
		require.NoError(t, <-sent)

		e = newEcho()
		ws, _ = dialGorillaTLS(t, p, serveTLS(t, c, p, e, []websocket.Option{websocket.WithSlowConsumer(websocket.CloseSlow)}, wm, buf), false)
		go func() {
			for range n {
				if ws.WriteMessage(gws.BinaryMessage, msg) != nil {
					return
				}
			}
		}()
		cl := e.next(t)
		require.Equal(t, websocket.ClosePolicyViolation, cl.code)
		require.ErrorIs(t, cl.err, websocket.ErrSlowConsumer)
		ws.Close()
	})
}

// TestWSSDialStalled: a server that accepts and never answers the TLS
// handshake: Timeouts.Handshake bounds it (looptls.ErrHandshakeTimeout),
// and so does the context, whose end cuts the handshake short. The combos
// run in parallel: each waits out the timeouts.
func TestWSSDialStalled(t *testing.T) {
	testenv.ForEachParallel(t, func(t *testing.T, c testenv.Combo) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		defer ln.Close()
		accepted := make(chan net.Conn, 2)
		go func() {
			for {
				conn, err := ln.Accept()
				if err != nil {
					return
				}
				accepted <- conn // held open, never answered
			}
		}()
		defer func() {
			ln.Close()
			for len(accepted) > 0 {
				(<-accepted).Close()
			}
		}()
		loop := newLoop(t, c)
		url := "wss://" + ln.Addr().String() + "/"

		_, err = websocket.Dial(context.Background(), loop, url, newClient(), websocket.WithTimeouts(websocket.Timeouts{Handshake: 200 * time.Millisecond}))
		require.ErrorIs(t, err, looptls.ErrHandshakeTimeout)

		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		_, err = websocket.Dial(ctx, loop, url, newClient())
		require.ErrorIs(t, err, context.DeadlineExceeded)
	})
}

// TestWSSHub: a hub's broadcasts reach wss members, each encrypted for its
// own connection: gorilla's clients with and without compression and a
// client of this package's (its frames masked per member), every message
// whole and in order.
func TestWSSHub(t *testing.T) {
	p := testenv.NewPKI(t)
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		r := newRoom()
		// Watermarks far above what is broadcast: no member turns
		// unwritable, so none misses a message (PauseReading's rule).
		wm := engine.WithBufferLimits(engine.BufferLimits{LowWatermark: 1 << 20, HighWatermark: 8 << 20})
		addr := serveTLS(t, c, p, r, []websocket.Option{websocket.WithCompression(true)}, wm)
		var gs []*gws.Conn
		for _, comp := range []bool{false, true, false, true} {
			ws, _ := dialGorillaTLS(t, p, addr, comp)
			gs = append(gs, ws)
		}
		loop := newLoop(t, c)
		cl := newClient()
		dial(t, loop, "wss://"+addr+"/", cl, wssClient(p), websocket.WithCompression(true))
		testenv.Eventually(t, 30*time.Second, "every client in the hub", func() bool { return r.hub.Len() == len(gs)+1 })
		msgs := [][]byte{[]byte("one"), pattern(200, 1), bytes.Repeat([]byte("compressible "), 6000), pattern(40<<10, 2)}
		for _, m := range msgs {
			require.NoError(t, r.hub.Broadcast(websocket.Binary, m))
		}
		for k, ws := range gs {
			for i, m := range msgs {
				_, got, err := ws.ReadMessage()
				require.NoError(t, err, "client %d, message %d", k, i)
				require.True(t, bytes.Equal(m, got), "client %d, message %d: %d bytes, want %d", k, i, len(got), len(m))
			}
		}
		for i, m := range msgs {
			require.True(t, bytes.Equal(m, cl.next(t).p), "Dial's client, message %d", i)
		}
		require.Zero(t, r.hub.Stats().Dropped)
	})
}
