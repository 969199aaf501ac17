package httpserver_test

import (
	"bufio"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/require"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/httpserver"
	"github.com/ringloop/ringloop/internal/testenv"
)

// tlsInfo is what the /tls path answers: the request's reading of the TLS
// connection, in one format for every server.
func tlsInfo(st *tls.ConnectionState, scheme, host string) string {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h // the port differs between servers
	}
	if st == nil {
		return "no tls"
	}
	return fmt.Sprintf("sni=%s alpn=%s version=%s complete=%v scheme=%q host=%s",
		st.ServerName, st.NegotiatedProtocol, tls.VersionName(st.Version), st.HandshakeComplete, scheme, host)
}

// stdTLS is stdEcho plus /tls and /sum (the body's length and SHA-256).
var stdTLS = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/tls":
		_, _ = io.WriteString(w, tlsInfo(r.TLS, r.URL.Scheme, r.Host))
	case "/sum":
		h := sha256.New()
		n, err := io.Copy(h, r.Body)
		_, _ = fmt.Fprintf(w, "n=%d sha256=%x err=%v", n, h.Sum(nil), err)
	default:
		stdEcho.ServeHTTP(w, r)
	}
})

// fastTLS is fastEcho plus /tls and /sum.
var fastTLS = httpserver.HandlerFunc(func(w *httpserver.Response, r *httpserver.Request) {
	switch string(r.Path()) {
	case "/tls":
		_, _ = w.WriteString(tlsInfo(r.TLS(), "", string(r.Host())))
	case "/sum":
		_, _ = fmt.Fprintf(w, "n=%d sha256=%x err=<nil>", len(r.Body()), sha256.Sum256(r.Body()))
	default:
		fastEcho.ServeFast(w, r)
	}
})

var tlsVariants = []struct {
	name string
	make func(opts ...httpserver.Option) (*httpserver.Server, error)
}{
	{"fast", func(o ...httpserver.Option) (*httpserver.Server, error) { return httpserver.NewFast(fastTLS, o...) }},
	{"adapter", func(o ...httpserver.Option) (*httpserver.Server, error) { return httpserver.New(stdTLS, o...) }},
	{"inline", func(o ...httpserver.Option) (*httpserver.Server, error) {
		return httpserver.New(stdTLS, append(o, httpserver.WithInlineHTTP())...)
	}},
}

// serverTLS is a configuration with one certificate for localhost.
func serverTLS(t *testing.T, p *testenv.PKI) *tls.Config {
	return &tls.Config{Certificates: []tls.Certificate{p.Leaf(t, "localhost", "localhost", "127.0.0.1")}}
}

// clientTLS trusts p's CA and names localhost by SNI.
func clientTLS(p *testenv.PKI) *tls.Config {
	return &tls.Config{RootCAs: p.Pool, ServerName: "localhost", NextProtos: []string{"http/1.1"}}
}

// onLoopTLS serves s with ListenTLS on a new loop of combo c and returns
// its address.
func onLoopTLS(t *testing.T, c testenv.Combo, s *httpserver.Server, certFile, keyFile string) string {
	t.Helper()
	loop, err := engine.New(c.Options()...)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, loop.Close()) })
	a, err := s.ListenTLS(loop, "tcp", "127.0.0.1:0", certFile, keyFile)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.Close()) })
	return a.String()
}

// httpsTransport dials addr whatever the URL's host, so that URLs can name
// localhost (the certificate's name) without resolving it.
func httpsTransport(p *testenv.PKI, addr string, conns int) *http.Transport {
	return &http.Transport{
		TLSClientConfig:     clientTLS(p),
		MaxIdleConnsPerHost: conns,
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, network, addr)
		},
	}
}

// get fetches url through tr and returns the status and body.
func get(t *testing.T, tr *http.Transport, method, url string, body io.Reader) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, body)
	require.NoError(t, err)
	res, err := (&http.Client{Transport: tr, Timeout: 60 * time.Second}).Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return res.StatusCode, string(b)
}

// netHTTPTLSInfo is what net/http's own TLS server answers on /tls.
func netHTTPTLSInfo(t *testing.T, p *testenv.PKI) string {
	ts := httptest.NewUnstartedServer(stdTLS)
	ts.TLS = serverTLS(t, p)
	ts.StartTLS()
	defer ts.Close()
	tr := httpsTransport(p, ts.Listener.Addr().String(), 1)
	defer tr.CloseIdleConnections()
	_, got := get(t, tr, "GET", "https://localhost/tls", nil)
	return got
}

// big is a 4 MiB upload of a pattern that shows reordering; bigSum is
// what /sum answers to it.
var big = func() string {
	b := make([]byte, 4<<20)
	for i := range b {
		b[i] = byte(i*7 + i>>8)
	}
	return string(b)
}()

var bigSum = fmt.Sprintf("n=%d sha256=%x err=<nil>", len(big), sha256.Sum256([]byte(big)))

// streamed is what /stream?n=2048 answers.
var streamed = func() string {
	var b strings.Builder
	for i := range 2048 {
		b.WriteString(strings.Repeat(string(rune('a'+i%26)), 1000))
	}
	return b.String()
}()

// TestHTTPS: Go's http.Client over TLS, on every API, backend, kernel
// profile and threading mode: keep-alive connections reused across many
// requests from 8 goroutines; the handler's view of TLS (r.TLS on the
// adapter, Request.TLS on the fast API) is net/http's (ServerName from
// SNI, ALPN's http/1.1, no URL scheme, Host from the header); a 4 MiB
// upload and a 2 MB streamed response arrive whole; Hijack and Upgrade
// refuse with their TLS errors.
func TestHTTPS(t *testing.T) {
	p := testenv.NewPKI(t)
	want := netHTTPTLSInfo(t, p)
	require.Contains(t, want, "sni=localhost alpn=http/1.1")
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		for _, v := range tlsVariants {
			t.Run(v.name, func(t *testing.T) {
				testenv.CheckLeaks(t)
				s, err := v.make(httpserver.WithTLSConfig(serverTLS(t, p)), httpserver.WithLimits(httpserver.Limits{Body: 16 << 20}))
				require.NoError(t, err)
				addr := onLoopTLS(t, c, s, "", "")
				tr := httpsTransport(p, addr, 8)
				defer tr.CloseIdleConnections()
				clientRoundsOn(t, tr, "https://localhost", 8, 20)

				code, got := get(t, tr, "GET", "https://localhost/tls", nil)
				require.Equal(t, 200, code)
				require.Equal(t, want, got, "the handler sees TLS as under net/http")

				code, got = get(t, tr, "POST", "https://localhost/sum", strings.NewReader(big))
				require.Equal(t, 200, code)
				require.Equal(t, bigSum, got, "the upload arrived whole")

				code, got = get(t, tr, "GET", "https://localhost/stream?n=2048", nil)
				require.Equal(t, 200, code)
				require.True(t, got == streamed, "a 2 MB streamed response arrives whole and in order (%d bytes)", len(got))

			})
		}
	})
}

// TestHTTPSPipelining: 32 requests written at once on one TLS connection
// are answered in order, and a last one with Connection: close ends the
// connection with close_notify (a clean EOF).
func TestHTTPSPipelining(t *testing.T) {
	p := testenv.NewPKI(t)
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		for _, v := range tlsVariants {
			t.Run(v.name, func(t *testing.T) {
				testenv.CheckLeaks(t)
				s, err := v.make(httpserver.WithTLSConfig(serverTLS(t, p)))
				require.NoError(t, err)
				addr := onLoopTLS(t, c, s, "", "")
				tc, err := tls.Dial("tcp", addr, clientTLS(p))
				require.NoError(t, err)
				defer tc.Close()
				require.NoError(t, tc.SetDeadline(time.Now().Add(60*time.Second)))
				var reqs strings.Builder
				const n = 32
				for i := range n {
					fmt.Fprintf(&reqs, "GET /p%d HTTP/1.1\r\nHost: localhost\r\n\r\n", i)
				}
				reqs.WriteString("GET /last HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
				_, err = io.WriteString(tc, reqs.String())
				require.NoError(t, err)
				br := bufio.NewReader(tc)
				for i := range n + 1 {
					res, err := http.ReadResponse(br, nil)
					require.NoError(t, err, "response %d", i)
					b, err := io.ReadAll(res.Body)
					require.NoError(t, err)
					path := fmt.Sprintf("/p%d", i)
					if i == n {
						path = "/last"
						require.True(t, res.Close)
					}
					require.Contains(t, string(b), "uri="+path+"\n")
				}
				_, err = br.ReadByte()
				require.ErrorIs(t, err, io.EOF, "close_notify, then the end")
			})
		}
	})
}

// TestHTTPSPipelinedThenClose: 40 requests pipelined, then the client's
// close_notify (CloseWrite) or its TCP FIN without one: every request that
// came before the end is answered, in order, before the connection closes,
// as over plain TCP (TestPipelinedThenHalfClose).
func TestHTTPSPipelinedThenClose(t *testing.T) {
	p := testenv.NewPKI(t)
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		for _, v := range tlsVariants {
			for _, end := range []string{"close_notify", "FIN"} {
				t.Run(v.name+"/"+end, func(t *testing.T) {
					testenv.CheckLeaks(t)
					s, err := v.make(httpserver.WithTLSConfig(serverTLS(t, p)))
					require.NoError(t, err)
					addr := onLoopTLS(t, c, s, "", "")
					raw, err := net.DialTimeout("tcp", addr, 10*time.Second)
					require.NoError(t, err)
					defer raw.Close()
					tc := tls.Client(raw, clientTLS(p))
					require.NoError(t, tc.SetDeadline(time.Now().Add(60*time.Second)))
					require.NoError(t, tc.Handshake())
					var reqs strings.Builder
					const n = 40
					for i := range n {
						fmt.Fprintf(&reqs, "GET /p%d HTTP/1.1\r\nHost: localhost\r\n\r\n", i)
					}
					_, err = io.WriteString(tc, reqs.String())
					require.NoError(t, err)
					if end == "close_notify" {
						require.NoError(t, tc.CloseWrite())
					} else {
						require.NoError(t, raw.(*net.TCPConn).CloseWrite())
					}
					br := bufio.NewReader(tc)
					for i := range n {
						res, err := http.ReadResponse(br, nil)
						require.NoError(t, err, "response %d of %d", i, n)
						b, err := io.ReadAll(res.Body)
						require.NoError(t, err)
						require.Contains(t, string(b), fmt.Sprintf("uri=/p%d\n", i))
					}
					_, err = br.ReadByte()
					require.Error(t, err, "the connection ends after the last answer")
				})
			}
		}
	})
}

// TestHTTPSCurl: curl verifies the server with --cacert, on both APIs:
// two requests on one HTTP/1.1 connection, the TLS state the handler saw,
// h2 by ALPN when curl may choose, a 1 MiB upload over it (Go's client
// sends 4 MiB in TestHTTPS).
func TestHTTPSCurl(t *testing.T) {
	curl := tool(t, "curl")
	p := testenv.NewPKI(t)
	upload := filepath.Join(t.TempDir(), "upload")
	require.NoError(t, os.WriteFile(upload, []byte(strings.Repeat("c", 1<<20)), 0o600))
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		for _, v := range tlsVariants {
			t.Run(v.name, func(t *testing.T) {
				testenv.CheckLeaks(t)
				s, err := v.make(httpserver.WithTLSConfig(serverTLS(t, p)), httpserver.WithLimits(httpserver.Limits{Body: 16 << 20}))
				require.NoError(t, err)
				addr := onLoopTLS(t, c, s, "", "")
				_, port, err := net.SplitHostPort(addr)
				require.NoError(t, err)
				base := "https://localhost:" + port
				run := func(args ...string) string {
					args = append([]string{"-sS", "--max-time", "60", "--cacert", p.CAFile, "--resolve", "localhost:" + port + ":127.0.0.1"}, args...)
					out, err := exec.Command(curl, args...).CombinedOutput()
					require.NoError(t, err, "curl %v: %s", args, out)
					return string(out)
				}
				out := run("-v", "--http1.1", base+"/tls", base+"/b")
				require.Contains(t, out, "sni=localhost alpn=http/1.1")
				require.Contains(t, out, "uri=/b")
				require.Contains(t, out, "Re-using existing connection")
				out = run(base + "/tls") // curl offers h2 by default, and gets it
				require.Contains(t, out, "sni=localhost alpn=h2")
				out = run("--data-binary", "@"+upload, base+"/up")
				require.Contains(t, out, fmt.Sprintf("cl=%d\n", 1<<20))
			})
		}
	})
}

// TestHTTPSBadClients: a plain HTTP client on the TLS port gets net/http's
// answer (a 400 that says why, byte for byte what net/http sends) and the
// close; a client that never finishes its handshake is closed (cut by the
// handshake timeout, the read-header timeout as in net/http); the failures
// are logged; they leave no goroutine, no descriptor and no connection
// counted. Go's http.Client reads the same 400.
func TestHTTPSBadClients(t *testing.T) {
	p := testenv.NewPKI(t)
	std := httptest.NewUnstartedServer(stdTLS)
	std.Config.ErrorLog = log.New(io.Discard, "", 0)
	std.StartTLS()
	conn := dial(t, "http://"+std.Listener.Addr().String())
	_, err := io.WriteString(conn, "GET / HTTP/1.1\r\nHost: localhost\r\n\r\n")
	require.NoError(t, err)
	want := readEOF(t, conn)
	require.NoError(t, conn.Close())
	std.Close()
	require.Contains(t, want, "400 Bad Request", "net/http's answer to plain HTTP on its TLS port")
	testenv.ForEachParallel(t, func(t *testing.T, c testenv.Combo) {
		var log testenv.SyncBuffer
		s, err := httpserver.New(stdTLS, httpserver.WithTLSConfig(serverTLS(t, p)),
			httpserver.WithTimeouts(httpserver.Timeouts{ReadHeader: 300 * time.Millisecond}),
			httpserver.WithLogger(slog.New(slog.NewTextHandler(&log, nil))))
		require.NoError(t, err)
		addr := onLoopTLS(t, c, s, "", "")
		for i := range 10 {
			conn := dial(t, "http://"+addr)
			_, err := io.WriteString(conn, "GET / HTTP/1.1\r\nHost: localhost\r\n\r\n")
			require.NoError(t, err)
			out := readEOF(t, conn)
			require.Equal(t, want, out, "run %d: plain HTTP on the TLS port is answered as net/http answers it", i)
			require.NoError(t, conn.Close())
		}
		resp, err := http.Get("http://" + addr + "/")
		require.NoError(t, err)
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		require.NoError(t, resp.Body.Close())
		require.Equal(t, 400, resp.StatusCode)
		require.Equal(t, "Client sent an HTTP request to an HTTPS server.\n", string(body))
		stalled := dial(t, "http://"+addr)
		_, err = stalled.Write([]byte{0x16, 0x03, 0x01}) // the start of a record header, never finished
		require.NoError(t, err)
		readEOF(t, stalled)
		testenv.Eventually(t, 30*time.Second, "the handshake errors logged", func() bool {
			return strings.Count(log.String(), "TLS handshake error") >= 12
		})
		require.Contains(t, log.String(), "timed out")
		require.Equal(t, 0, s.Metrics().Connections)
		// The server still serves.
		tr := httpsTransport(p, addr, 1)
		defer tr.CloseIdleConnections()
		code, _ := get(t, tr, "GET", "https://localhost/ok", nil)
		require.Equal(t, 200, code)
	})
}

// TestHTTPSShutdown: Shutdown with open TLS connections closes the idle one
// at once (with close_notify: a clean EOF), lets the request in flight
// finish on its connection, which then closes, and returns.
func TestHTTPSShutdown(t *testing.T) {
	p := testenv.NewPKI(t)
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		release := make(chan struct{})
		entered := make(chan struct{}, 1)
		s, err := httpserver.New(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/slow" {
				entered <- struct{}{}
				<-release
			}
			_, _ = io.WriteString(w, "done "+r.URL.Path)
		}), httpserver.WithTLSConfig(serverTLS(t, p)))
		require.NoError(t, err)
		loop, err := engine.New(c.Options()...)
		require.NoError(t, err)
		defer func() { require.NoError(t, loop.Close()) }()
		a, err := s.ListenTLS(loop, "tcp", "127.0.0.1:0", "", "")
		require.NoError(t, err)

		dialTLS := func() *tls.Conn {
			tc, err := tls.Dial("tcp", a.String(), clientTLS(p))
			require.NoError(t, err)
			require.NoError(t, tc.SetDeadline(time.Now().Add(60*time.Second)))
			t.Cleanup(func() { _ = tc.Close() })
			return tc
		}
		idle := dialTLS()
		_, err = io.WriteString(idle, "GET /fast HTTP/1.1\r\nHost: localhost\r\n\r\n")
		require.NoError(t, err)
		idleR := bufio.NewReader(idle)
		res, err := http.ReadResponse(idleR, nil)
		require.NoError(t, err)
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()

		busy := dialTLS()
		_, err = io.WriteString(busy, "GET /slow HTTP/1.1\r\nHost: localhost\r\n\r\n")
		require.NoError(t, err)
		<-entered

		done := make(chan error, 1)
		go func() { done <- s.Shutdown(context.Background()) }()
		_, err = idleR.ReadByte()
		require.ErrorIs(t, err, io.EOF, "the idle connection is closed with close_notify")
		select {
		case err := <-done:
			t.Fatalf("Shutdown returned %v with a request in flight", err)
		default:
		}
		close(release)
		b, err := io.ReadAll(busy)
		require.NoError(t, err)
		require.Contains(t, string(b), "Connection: close")
		require.Contains(t, string(b), "done /slow")
		require.NoError(t, <-done)
		require.Equal(t, 0, s.Metrics().Connections)
	})
}

// TestListenTLSConfig: ListenTLS loads the certificate files it is given
// (WithTLSConfig not needed), offers h2 and http/1.1 beside the
// configuration's protocols, closes a connection that negotiated another
// protocol (as net/http), and fails clearly on missing files and after
// Close.
func TestListenTLSConfig(t *testing.T) {
	p := testenv.NewPKI(t)
	certFile, keyFile := p.LeafFiles(t, "localhost", "localhost", "127.0.0.1")
	testenv.ForEachBackend(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		s, err := httpserver.NewFast(fastTLS, httpserver.WithTLSConfig(&tls.Config{NextProtos: []string{"h2", "x-other"}}))
		require.NoError(t, err)
		addr := onLoopTLS(t, c, s, certFile, keyFile)

		cfg := clientTLS(p)
		cfg.NextProtos = []string{"h2", "http/1.1"}
		tc, err := tls.Dial("tcp", addr, cfg)
		require.NoError(t, err)
		require.Equal(t, "h2", tc.ConnectionState().NegotiatedProtocol, "h2 is offered first")
		require.NoError(t, tc.Close())

		cfg.NextProtos = []string{"x-other"}
		tc, err = tls.Dial("tcp", addr, cfg)
		require.NoError(t, err)
		require.Equal(t, "x-other", tc.ConnectionState().NegotiatedProtocol)
		require.NoError(t, tc.SetDeadline(time.Now().Add(60*time.Second)))
		_, err = tc.Read(make([]byte, 1))
		require.ErrorIs(t, err, io.EOF, "another protocol: closed")
		require.NoError(t, tc.Close())

		loop, err := engine.New(c.Options()...)
		require.NoError(t, err)
		defer func() { require.NoError(t, loop.Close()) }()
		_, err = s.ListenTLS(loop, "tcp", "127.0.0.1:0", certFile+".missing", keyFile)
		require.ErrorIs(t, err, os.ErrNotExist)
		s2, err := httpserver.NewFast(fastTLS)
		require.NoError(t, err)
		_, err = s2.ListenTLS(loop, "tcp", "127.0.0.1:0", "", "")
		require.Error(t, err, "no certificate at all")
		require.NoError(t, s2.Close())
		_, err = s2.ListenTLS(loop, "tcp", "127.0.0.1:0", certFile, keyFile)
		require.ErrorIs(t, err, http.ErrServerClosed)
	})
}

// TestHijackTLS: Hijack over TLS hands the adapter's connection to a
// net.Conn that reads and writes plaintext (records still on the loop):
// gorilla/websocket over wss echoes messages from 0 bytes to 1 MiB whole;
// a CONNECT tunnel reads the bytes the client sent behind the request
// first, then carries bytes both ways, and the client's close_notify reads
// as EOF on the hijacked side, whose Close ends the client's stream
// cleanly.
func TestHijackTLS(t *testing.T) {
	p := testenv.NewPKI(t)
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		var handlers sync.WaitGroup
		ws := wsEcho(&handlers)
		s, err := httpserver.New(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method != "CONNECT" {
				ws(w, r)
				return
			}
			conn, _, err := w.(http.Hijacker).Hijack()
			if err != nil {
				http.Error(w, err.Error(), 500)
				return
			}
			defer conn.Close()
			_ = conn.SetDeadline(time.Now().Add(60 * time.Second))
			_, _ = io.WriteString(conn, "HTTP/1.1 200 Connection established\r\n\r\n")
			_, _ = io.Copy(conn, conn) // echo until the client's close_notify
		}), httpserver.WithTLSConfig(serverTLS(t, p)))
		require.NoError(t, err)
		addr := onLoopTLS(t, c, s, "", "")

		d := websocket.Dialer{HandshakeTimeout: 30 * time.Second, TLSClientConfig: clientTLS(p)}
		wc, resp, err := d.Dial("wss://"+addr+"/echo", nil)
		require.NoError(t, err)
		require.Equal(t, http.StatusSwitchingProtocols, resp.StatusCode)
		echoRounds(t, wc)
		require.NoError(t, wc.WriteMessage(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, "")))
		_, _, err = wc.ReadMessage()
		var ce *websocket.CloseError
		require.True(t, errors.As(err, &ce), "read after close: %v", err)
		wc.Close()

		tc, err := tls.Dial("tcp", addr, clientTLS(p))
		require.NoError(t, err)
		defer tc.Close()
		require.NoError(t, tc.SetDeadline(time.Now().Add(60*time.Second)))
		_, err = io.WriteString(tc, "CONNECT example.test:443 HTTP/1.1\r\nHost: example.test:443\r\n\r\nearly bytes")
		require.NoError(t, err)
		r := bufio.NewReader(tc)
		status, err := r.ReadString('\n')
		require.NoError(t, err)
		require.Equal(t, "HTTP/1.1 200 Connection established\r\n", status)
		blank, err := r.ReadString('\n')
		require.NoError(t, err)
		require.Equal(t, "\r\n", blank)
		got := make([]byte, len("early bytes"))
		_, err = io.ReadFull(r, got)
		require.NoError(t, err)
		require.Equal(t, "early bytes", string(got))
		_, err = io.WriteString(tc, "later")
		require.NoError(t, err)
		got = make([]byte, 5)
		_, err = io.ReadFull(r, got)
		require.NoError(t, err)
		require.Equal(t, "later", string(got))
		require.NoError(t, tc.CloseWrite()) // close_notify
		rest, err := io.ReadAll(r)
		require.NoError(t, err, "the hijacked side's Close ends the stream with close_notify")
		require.Empty(t, rest)
		handlers.Wait()
		require.Zero(t, s.Metrics().Connections, "hijacked connections are no longer the server's")
	})
}
