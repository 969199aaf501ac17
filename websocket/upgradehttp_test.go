package websocket_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	coder "github.com/coder/websocket"
	gws "github.com/gorilla/websocket"
	"github.com/stretchr/testify/require"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/httpserver"
	"github.com/ringloop/ringloop/internal/testenv"
	"github.com/ringloop/ringloop/websocket"
)

// adapterPaths are the upgrade paths through Upgrade (net/http).
func adapterPaths() []upgradePath {
	var out []upgradePath
	for _, p := range upgradePaths {
		if p.name == "Upgrade" || strings.HasPrefix(p.name, "Upgrade-") {
			out = append(out, p)
		}
	}
	return out
}

// TestUpgradeHTTPMux: one http.ServeMux behind the adapter serves an
// ordinary route and WebSockets on one port, over HTTP and HTTPS, handlers
// on goroutines and inline: the ordinary route answers; gorilla's client,
// with and without permessage-deflate, and coder's get every message back
// byte for byte, whole and in fragments, from 0 B to 1 MiB, and their
// closes reach OnClose; a client that sends an ordinary request, the
// upgrade and a first frame in one write gets the answer, the 101 and the
// frame's echo, in order.
func TestUpgradeHTTPMux(t *testing.T) {
	p := testenv.NewPKI(t)
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		loop, err := engine.New(c.Options()...)
		require.NoError(t, err)
		t.Cleanup(func() { require.NoError(t, loop.Close()) })
		for _, path := range adapterPaths() {
			t.Run(path.name, func(t *testing.T) {
				var pki *testenv.PKI
				scheme, wsScheme := "http://", "ws://"
				var clientTLS *tls.Config
				if path.tls {
					pki, scheme, wsScheme = p, "https://", "wss://"
					clientTLS = &tls.Config{RootCAs: p.Pool}
				}
				e := newEcho()
				addr := path.serve(t, loop, pki, serveArgs{h: e, opts: []websocket.Option{websocket.WithCompression(true)}})

				hc := &http.Client{Transport: &http.Transport{TLSClientConfig: clientTLS}, Timeout: 30 * time.Second}
				defer hc.CloseIdleConnections()
				resp, err := hc.Get(scheme + addr + "/plain")
				require.NoError(t, err)
				body, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				require.NoError(t, err)
				require.Equal(t, http.StatusOK, resp.StatusCode)
				require.Equal(t, "plain route", string(body))

				for _, compress := range []bool{false, true} {
					d := gws.Dialer{HandshakeTimeout: 30 * time.Second, EnableCompression: compress, TLSClientConfig: clientTLS}
					ws, resp, err := d.Dial(wsScheme+addr+"/ws", nil)
					require.NoError(t, err)
					require.Equal(t, http.StatusSwitchingProtocols, resp.StatusCode)
					_ = ws.SetReadDeadline(time.Now().Add(60 * time.Second))
					echoGorilla(t, ws)
					require.NoError(t, ws.WriteMessage(gws.CloseMessage, gws.FormatCloseMessage(1000, "gorilla bye")))
					_, _, err = ws.ReadMessage()
					var ce *gws.CloseError
					require.True(t, errors.As(err, &ce), "%v", err)
					ws.Close()
					require.Equal(t, closed{1000, "gorilla bye", nil}, e.next(t))
				}

				coderEcho(t, wsScheme+addr+"/ws", clientTLS)
				require.Equal(t, closed{4002, "coder bye", nil}, e.next(t))

				conn := dialPath(t, addr, pki)
				both := "GET /plain HTTP/1.1\r\nHost: " + addr + "\r\n\r\n" + browserHandshake(addr, "")
				_, err = conn.Write(append([]byte(both), frame(finBinary, []byte("right behind"), true)...))
				require.NoError(t, err)
				r := bufio.NewReader(conn)
				resp, err = http.ReadResponse(r, nil)
				require.NoError(t, err)
				body, err = io.ReadAll(resp.Body)
				require.NoError(t, err)
				require.Equal(t, "plain route", string(body))
				resp, err = http.ReadResponse(r, nil)
				require.NoError(t, err)
				require.Equal(t, http.StatusSwitchingProtocols, resp.StatusCode)
				f, err := (&rawConn{conn, r}).read()
				require.NoError(t, err)
				require.Equal(t, serverFrame{finBinary, []byte("right behind")}, f)
				conn.Close()
				require.Equal(t, websocket.CloseAbnormal, e.next(t).code)
			})
		}
	})
}

// coderEcho echoes messages from 0 B to 1 MiB through coder/websocket's
// client, whole and streamed, and closes with 4002.
func coderEcho(t *testing.T, url string, clientTLS *tls.Config) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	opts := &coder.DialOptions{CompressionMode: coder.CompressionDisabled}
	if clientTLS != nil {
		opts.HTTPClient = &http.Client{Transport: &http.Transport{TLSClientConfig: clientTLS}}
	}
	ws, _, err := coder.Dial(ctx, url, opts)
	require.NoError(t, err)
	defer ws.CloseNow()
	ws.SetReadLimit(4 << 20)
	for i, n := range echoSizes {
		kind := coder.MessageBinary
		if i%2 == 0 {
			kind = coder.MessageText
		}
		msg := pattern(n, i)
		require.NoError(t, ws.Write(ctx, kind, msg))
		gotKind, got, err := ws.Read(ctx)
		require.NoError(t, err)
		require.Equal(t, kind, gotKind)
		require.True(t, bytes.Equal(msg, got), "message %d", i)

		w, err := ws.Writer(ctx, kind)
		require.NoError(t, err)
		for off := 0; off < n; off += 4000 {
			_, err = w.Write(msg[off:min(n, off+4000)])
			require.NoError(t, err)
		}
		require.NoError(t, w.Close())
		_, got, err = ws.Read(ctx)
		require.NoError(t, err)
		require.True(t, bytes.Equal(msg, got), "streamed message %d", i)
	}
	require.NoError(t, ws.Close(coder.StatusCode(4002), "coder bye"))
}

// TestUpgradeHTTPThousand: 1000 WebSockets (250 with -short) upgraded
// through Upgrade from a ServeMux on two loops, dialled by 8 clients at
// once, are served on the loops with no goroutine each: with all of them
// open the process has no more goroutines than a constant over what it had
// with one (the adapter's pooled workers, at most one per request in
// flight), and every one of them then echoes its own message byte for
// byte. Over HTTP and HTTPS, on every backend and mode.
func TestUpgradeHTTPThousand(t *testing.T) {
	p := testenv.NewPKI(t)
	testenv.ForEachBackend(t, func(t *testing.T, c testenv.Combo) {
		for _, useTLS := range []bool{false, true} {
			name := "ws"
			if useTLS {
				name = "wss"
			}
			t.Run(name, func(t *testing.T) {
				testenv.CheckLeaks(t)
				n := 1000
				if testing.Short() {
					n = 250
				}
				loops := make([]*engine.Loop, 2) // a group's loops: both serve
				for i := range loops {
					l, err := engine.New(c.Options()...)
					require.NoError(t, err)
					t.Cleanup(func() { require.NoError(t, l.Close()) })
					loops[i] = l
				}
				thousandOn(t, loops, p, useTLS, n)
			})
		}
	})
}

func thousandOn(t *testing.T, loops []*engine.Loop, p *testenv.PKI, useTLS bool, n int) {
	var opened sync.WaitGroup
	h := &countOpen{wg: &opened}
	mux := http.NewServeMux()
	mux.HandleFunc("/plain", func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "plain route") })
	mux.HandleFunc("/ws", func(w http.ResponseWriter, r *http.Request) {
		if err := websocket.Upgrade(w, r, h); err != nil {
			t.Errorf("Upgrade: %v", err)
		}
	})
	var sopts []httpserver.Option
	scheme := "ws://"
	var clientTLS *tls.Config
	if useTLS {
		sopts = append(sopts, httpserver.WithTLSConfig(serverTLS(t, p)))
		scheme, clientTLS = "wss://", &tls.Config{RootCAs: p.Pool}
	}
	s, err := httpserver.New(mux, sopts...)
	require.NoError(t, err)
	var addrs []string
	for _, l := range loops {
		addrs = append(addrs, listenHTTP(t, s, l, useTLS))
	}
	d := gws.Dialer{HandshakeTimeout: 60 * time.Second, TLSClientConfig: clientTLS}

	// One first, closed: the pools, timers and runtime goroutines that
	// serving needs at all are there before the count.
	opened.Add(1)
	ws, _, err := d.Dial(scheme+addrs[0]+"/ws", nil)
	require.NoError(t, err)
	ws.Close()
	opened.Wait()
	before := runtime.NumGoroutine()

	conns := make([]*gws.Conn, n)
	opened.Add(n)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += 8 {
				ws, _, err := d.Dial(scheme+addrs[i%len(addrs)]+"/ws", nil)
				if err != nil {
					errs <- fmt.Errorf("connection %d: %w", i, err)
					for j := i; j < n; j += 8 {
						opened.Done()
					}
					return
				}
				conns[i] = ws
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	opened.Wait()
	t.Cleanup(func() {
		for _, ws := range conns {
			if ws != nil {
				ws.Close()
			}
		}
	})
	// Workers idle since the burst may still be parked; what counts is that
	// the count does not grow with n. Wait for it rather than read it once:
	// a worker leaves the pool a second after its last job.
	var now int
	ok := testenv.Until(30*time.Second, func() bool {
		now = runtime.NumGoroutine()
		return now-before < 64
	})
	require.True(t, ok, "%d goroutines with %d WebSockets open, %d with one: a goroutine per connection?", now, n, before)
	t.Logf("%d WebSockets open: %d goroutines, %d with one closed", n, now, before)

	for i, ws := range conns {
		msg := pattern(100+i%1000, i)
		require.NoError(t, ws.WriteMessage(gws.BinaryMessage, msg))
	}
	for i, ws := range conns {
		_ = ws.SetReadDeadline(time.Now().Add(60 * time.Second))
		kind, got, err := ws.ReadMessage()
		require.NoError(t, err, "connection %d", i)
		require.Equal(t, gws.BinaryMessage, kind)
		require.True(t, bytes.Equal(pattern(100+i%1000, i), got), "connection %d: echo differs", i)
	}
	require.NoError(t, s.Close())
}

// countOpen echoes and counts each OnOpen on a WaitGroup.
type countOpen struct {
	silentEcho
	wg *sync.WaitGroup
}

func (c *countOpen) OnOpen(*websocket.Conn) { c.wg.Done() }

// TestUpgradeHTTPNodePython: npm's ws and Python's websockets, as clients,
// exchange messages up to 1 MiB with and without permessage-deflate
// through Upgrade behind the adapter, get their pings' pongs, and
// their closes (4000) reach OnClose.
func TestUpgradeHTTPNodePython(t *testing.T) {
	node, nodePath := nodeWS(t)
	py := pythonWebsockets(t)
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		loop, err := engine.New(c.Options()...)
		require.NoError(t, err)
		t.Cleanup(func() { require.NoError(t, loop.Close()) })
		e := newEcho()
		addr := serveAdapter(false)(t, loop, nil, serveArgs{h: e, opts: []websocket.Option{websocket.WithCompression(true)}})
		runScript(t, []string{"NODE_PATH=" + nodePath}, node, "testdata/ws_client.js", "ws://"+addr+"/plain-ws", "ws://"+addr+"/deflate")
		require.Equal(t, closed{4000, "node bye", nil}, e.next(t))
		require.Equal(t, closed{4000, "node bye", nil}, e.next(t))
		runScript(t, nil, py, "testdata/websockets_client.py", "ws://"+addr+"/plain-ws", "ws://"+addr+"/deflate")
		require.Equal(t, closed{4000, "py bye", nil}, e.next(t))
		require.Equal(t, closed{4000, "py bye", nil}, e.next(t))
	})
}

// unwrapping is a middleware's ResponseWriter that gives the one it wraps
// (http.ResponseController's convention); opaque is one that does not.
type unwrapping struct{ http.ResponseWriter }

func (u unwrapping) Unwrap() http.ResponseWriter { return u.ResponseWriter }

type opaque struct{ http.ResponseWriter }

// TestUpgradeHTTPWriters: Upgrade finds the adapter's writer under a
// middleware's that unwraps to it; one that does not is answered 500 with
// an error wrapping httpserver.ErrNotAdapter; after the handler wrote, it refuses (the answer
// begun is the handler's), and a second call on an upgraded request
// returns http.ErrHijacked.
func TestUpgradeHTTPWriters(t *testing.T) {
	testenv.ForEachBackend(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		loop, err := engine.New(c.Options()...)
		require.NoError(t, err)
		t.Cleanup(func() { require.NoError(t, loop.Close()) })
		errs := make(chan error, 2)
		mux := http.NewServeMux()
		mux.HandleFunc("/wrapped", func(w http.ResponseWriter, r *http.Request) {
			err := websocket.Upgrade(unwrapping{w}, r, silentEcho{})
			errs <- err
			if err == nil {
				errs <- websocket.Upgrade(w, r, silentEcho{})
			}
		})
		mux.HandleFunc("/opaque", func(w http.ResponseWriter, r *http.Request) {
			errs <- websocket.Upgrade(opaque{w}, r, silentEcho{})
		})
		mux.HandleFunc("/written", func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusTeapot)
			errs <- websocket.Upgrade(w, r, silentEcho{})
		})
		s, err := httpserver.New(mux)
		require.NoError(t, err)
		addr := listenHTTP(t, s, loop, false)
		req := func(path string) string {
			return strings.Replace(browserHandshake(addr, ""), "GET /ws ", "GET "+path+" ", 1)
		}

		require.Equal(t, http.StatusSwitchingProtocols, handshakeStatus(t, addr, nil, req("/wrapped")))
		require.NoError(t, <-errs)
		require.ErrorIs(t, <-errs, http.ErrHijacked)

		require.Equal(t, http.StatusInternalServerError, handshakeStatus(t, addr, nil, req("/opaque")))
		require.ErrorIs(t, <-errs, httpserver.ErrNotAdapter)

		require.Equal(t, http.StatusTeapot, handshakeStatus(t, addr, nil, req("/written")))
		err = <-errs
		require.ErrorIs(t, err, websocket.ErrHandshake)
		require.ErrorContains(t, err, "Upgrade after WriteHeader")
	})
}
