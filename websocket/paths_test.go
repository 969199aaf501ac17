package websocket_test

import (
	"bufio"
	"crypto/tls"
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
	"github.com/ringloop/ringloop/looptls"
	"github.com/ringloop/ringloop/websocket"
)

// Every way a server upgrades a connection, for the tests of what each
// must do alike (origin policy, handshake timeout, option checks).

// upgradePath starts a server of one kind on a loop of the combo (over TLS
// with a certificate of p when the path has tls) and returns its address.
type upgradePath struct {
	name  string
	tls   bool
	serve func(t *testing.T, loop *engine.Loop, p *testenv.PKI, a serveArgs) string
}

// serveArgs is what a path's server serves: h (nil too, for the tests of
// that mistake) with opts; hs configures the HTTP servers' timeouts, and
// handshake, if set, EngineHandler's (Timeouts.Handshake) and, under
// looptls.Server, the TLS handshake's; report, if set, gets the error each
// Upgrade or UpgradeFast call returns.
type serveArgs struct {
	h         websocket.Handler
	opts      []websocket.Option
	hs        httpserver.Timeouts
	handshake time.Duration
	report    func(error)
}

func (a serveArgs) reported(err error) {
	if a.report != nil {
		a.report(err)
	}
}

// upgradePaths lists them: the fast API's UpgradeFast over HTTP and HTTPS,
// EngineHandler plain and under looptls.Server, and Upgrade from an
// http.Handler over HTTP and
// HTTPS, on a goroutine and inline.
var upgradePaths = []upgradePath{
	{"UpgradeFast", false, serveFast},
	{"UpgradeFast-TLS", true, serveFast},
	{"EngineHandler", false, serveEngine},
	{"EngineHandler-TLS", true, serveEngine}, // under looptls.Server
	{"Upgrade", false, serveAdapter(false)},
	{"Upgrade-TLS", true, serveAdapter(false)},
	{"Upgrade-inline", false, serveAdapter(true)},
}

// serveAdapter serves Upgrade from an http.ServeMux behind the adapter
// (ListenTLS when p is set), beside an ordinary route, /plain; inline runs
// the handlers on the loop (WithInlineHTTP).
func serveAdapter(inline bool) func(t *testing.T, loop *engine.Loop, p *testenv.PKI, a serveArgs) string {
	return func(t *testing.T, loop *engine.Loop, p *testenv.PKI, a serveArgs) string {
		t.Helper()
		sopts := []httpserver.Option{httpserver.WithTimeouts(a.hs)}
		if p != nil {
			sopts = append(sopts, httpserver.WithTLSConfig(serverTLS(t, p)))
		}
		if inline {
			sopts = append(sopts, httpserver.WithInlineHTTP())
		}
		mux := http.NewServeMux()
		mux.HandleFunc("/plain", func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "plain route") })
		mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) { a.reported(websocket.Upgrade(w, r, a.h, a.opts...)) })
		s, err := httpserver.New(mux, sopts...)
		require.NoError(t, err)
		return listenHTTP(t, s, loop, p != nil)
	}
}

// serveFast serves UpgradeFast behind the fast API (ListenTLS when p is set).
func serveFast(t *testing.T, loop *engine.Loop, p *testenv.PKI, a serveArgs) string {
	t.Helper()
	sopts := []httpserver.Option{httpserver.WithTimeouts(a.hs)}
	if p != nil {
		sopts = append(sopts, httpserver.WithTLSConfig(serverTLS(t, p)))
	}
	s, err := httpserver.NewFast(httpserver.HandlerFunc(func(w *httpserver.Response, r *httpserver.Request) {
		if string(r.Path()) == "/plain" {
			_, _ = w.WriteString("plain route")
			return
		}
		a.reported(websocket.UpgradeFast(w, r, a.h, a.opts...))
	}), sopts...)
	require.NoError(t, err)
	return listenHTTP(t, s, loop, p != nil)
}

func listenHTTP(t *testing.T, s *httpserver.Server, loop *engine.Loop, useTLS bool) string {
	t.Helper()
	var a net.Addr
	var err error
	if useTLS {
		a, err = s.ListenTLS(loop, "tcp", "127.0.0.1:0", "", "")
	} else {
		a, err = s.Listen(loop, "tcp", "127.0.0.1:0")
	}
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.Close()) })
	return a.String()
}

// serveEngine serves EngineHandler, under looptls.Server when p is set:
// a.handshake bounds both the TLS handshake and then the request head.
func serveEngine(t *testing.T, loop *engine.Loop, p *testenv.PKI, a serveArgs) string {
	t.Helper()
	opts := a.opts
	var topts []looptls.Option
	if a.handshake > 0 {
		opts = append(opts[:len(opts):len(opts)], websocket.WithTimeouts(websocket.Timeouts{Handshake: a.handshake}))
		topts = append(topts, looptls.WithHandshakeTimeout(a.handshake))
	}
	eh, err := websocket.EngineHandler(a.h, opts...)
	require.NoError(t, err)
	if p != nil {
		eh = looptls.Server(eh, serverTLS(t, p), topts...)
	}
	ln, err := engine.Listen(loop, "tcp", "127.0.0.1:0", eh)
	require.NoError(t, err)
	t.Cleanup(func() { ln.Close() })
	return ln.Addr().String()
}

// forEachPath runs fn for every upgrade path under every combo, each with
// a loop of its own.
func forEachPath(t *testing.T, fn func(t *testing.T, c testenv.Combo, path upgradePath, loop *engine.Loop, p *testenv.PKI)) {
	p := testenv.NewPKI(t)
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		loop, err := engine.New(c.Options()...)
		require.NoError(t, err)
		t.Cleanup(func() { require.NoError(t, loop.Close()) })
		for _, path := range upgradePaths {
			t.Run(path.name, func(t *testing.T) {
				var pki *testenv.PKI
				if path.tls {
					pki = p
				}
				fn(t, c, path, loop, pki)
			})
		}
	})
}

// dialPath opens a client connection to a path's server (over TLS, trusting
// p, when it has one).
func dialPath(t *testing.T, addr string, p *testenv.PKI) net.Conn {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, 10*time.Second)
	require.NoError(t, err)
	if p != nil {
		tc := tls.Client(conn, &tls.Config{RootCAs: p.Pool, ServerName: "127.0.0.1"})
		_ = tc.SetDeadline(time.Now().Add(30 * time.Second))
		require.NoError(t, tc.Handshake())
		conn = tc
	}
	t.Cleanup(func() { conn.Close() })
	_ = conn.SetDeadline(time.Now().Add(60 * time.Second))
	return conn
}

// browserHandshake is an opening handshake shaped as a browser sends it,
// to path on host, with the Origin line given ("" for none) and then
// extra lines.
func browserHandshake(host, origin string, extra ...string) string {
	var b strings.Builder
	b.WriteString("GET /ws HTTP/1.1\r\nHost: " + host + "\r\n")
	b.WriteString("Connection: Upgrade\r\nPragma: no-cache\r\nCache-Control: no-cache\r\n")
	b.WriteString("User-Agent: Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36\r\n")
	b.WriteString("Upgrade: websocket\r\n")
	if origin != "" {
		b.WriteString("Origin: " + origin + "\r\n")
	}
	b.WriteString("Sec-WebSocket-Version: 13\r\nAccept-Encoding: gzip, deflate, br, zstd\r\nAccept-Language: en-US,en;q=0.9\r\n")
	b.WriteString("Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n")
	b.WriteString("Sec-WebSocket-Extensions: permessage-deflate; client_max_window_bits\r\n")
	for _, l := range extra {
		b.WriteString(l + "\r\n")
	}
	b.WriteString("\r\n")
	return b.String()
}

// handshakeStatus sends req on a new connection to addr and returns the
// answer's status (reading its body), closing the connection.
func handshakeStatus(t *testing.T, addr string, p *testenv.PKI, req string) int {
	t.Helper()
	conn := dialPath(t, addr, p)
	defer conn.Close()
	_, err := io.WriteString(conn, req)
	require.NoError(t, err)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	require.NoError(t, err)
	if resp.StatusCode != http.StatusSwitchingProtocols {
		_, _ = io.Copy(io.Discard, resp.Body)
	}
	return resp.StatusCode
}

// silentEcho is a Handler that answers nothing and reports nothing: for
// tests about the handshake alone.
type silentEcho struct{}

func (silentEcho) OnOpen(c *websocket.Conn) {}
func (silentEcho) OnMessage(c *websocket.Conn, kind websocket.MessageKind, p []byte) {
	_ = c.WriteMessage(kind, p)
}
func (silentEcho) OnClose(c *websocket.Conn, code int, reason string, err error) {}
