package httpserver_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/httpserver"
	"github.com/ringloop/ringloop/internal/testenv"
	"github.com/ringloop/ringloop/loopgroup"
)

func dial(t *testing.T, base string) net.Conn {
	t.Helper()
	c, err := net.DialTimeout("tcp", strings.TrimPrefix(base, "http://"), 5*time.Second)
	require.NoError(t, err)
	require.NoError(t, c.SetDeadline(time.Now().Add(30*time.Second)))
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// readEOF waits for the server to close c and returns what it sent first.
func readEOF(t *testing.T, c net.Conn) string {
	t.Helper()
	b, err := io.ReadAll(c)
	if err != nil && !errors.Is(err, net.ErrClosed) && !strings.Contains(err.Error(), "reset") {
		require.NoError(t, err)
	}
	return string(b)
}

// TestTimeouts: a slowloris client sending a header line at a time is cut
// off by the read-header timeout although it never stops sending, and one
// trickling its body by the read timeout; a connection that never sends, an
// idle keep-alive connection and a body that never completes are closed too.
func TestTimeouts(t *testing.T) {
	testenv.ForEachBackendParallel(t, func(t *testing.T, c testenv.Combo) {
		s, err := httpserver.NewFast(fastEcho, httpserver.WithTimeouts(httpserver.Timeouts{ReadHeader: 300 * time.Millisecond, Read: 600 * time.Millisecond, Idle: 300 * time.Millisecond}))
		require.NoError(t, err)
		base := onLoop(t, c, s)

		t.Run("slowloris", func(t *testing.T) {
			t.Parallel() // each on its own connection
			conn := dial(t, base)
			_, err := io.WriteString(conn, "GET / HTTP/1.1\r\nHost: h\r\n")
			require.NoError(t, err)
			start := time.Now()
			for {
				if _, err := io.WriteString(conn, "X-Slow: 1\r\n"); err != nil {
					break // closed by the server
				}
				if time.Since(start) > 20*time.Second {
					t.Fatal("slowloris connection still open after 20s")
				}
				time.Sleep(20 * time.Millisecond) // the client's pace, not a wait for the server
			}
		})
		t.Run("slow body", func(t *testing.T) {
			t.Parallel() // each on its own connection
			conn := dial(t, base)
			_, err := io.WriteString(conn, "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 100000\r\n\r\n")
			require.NoError(t, err)
			start := time.Now()
			for {
				if _, err := io.WriteString(conn, "b"); err != nil {
					break // closed by the server: the read timeout counts from the first byte
				}
				if time.Since(start) > 20*time.Second {
					t.Fatal("slow body still accepted after 20s")
				}
				time.Sleep(20 * time.Millisecond)
			}
		})
		t.Run("silent", func(t *testing.T) {
			t.Parallel() // each on its own connection
			conn := dial(t, base)
			require.Empty(t, readEOF(t, conn), "a connection that never sends is closed")
		})
		t.Run("idle", func(t *testing.T) {
			t.Parallel() // each on its own connection
			conn := dial(t, base)
			_, err := io.WriteString(conn, "GET /1 HTTP/1.1\r\nHost: h\r\n\r\n")
			require.NoError(t, err)
			out := readEOF(t, conn)
			require.Contains(t, out, "uri=/1", "answered, then closed when idle")
		})
		t.Run("body", func(t *testing.T) {
			t.Parallel() // each on its own connection
			conn := dial(t, base)
			_, err := io.WriteString(conn, "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 10\r\n\r\nabc")
			require.NoError(t, err)
			require.Empty(t, readEOF(t, conn))
		})
	})
}

// TestSlowReader: a client that pipelines requests for 16 KiB responses and
// never reads makes the server stop serving it once the connection's output
// passes the high watermark: no handler starts while the connection is
// unwritable (in the fast API, none runs with more than the high watermark
// buffered); once the client reads, every response arrives in order. The
// test waits for the connection to turn unwritable (the client never reads,
// so it must), not for a pause of some length.
func TestSlowReader(t *testing.T) {
	testenv.ForEachBackend(t, func(t *testing.T, c testenv.Combo) {
		for _, mode := range []string{"fast", "adapter"} {
			t.Run(mode, func(t *testing.T) {
				testenv.CheckLeaks(t)
				var maxBuffered, served, unwritableRuns atomic.Int64
				obs := &connCatcher{}
				started := func() {
					served.Add(1)
					if !obs.conn.Load().Writable() {
						unwritableRuns.Add(1)
					}
				}
				payload := strings.Repeat("p", 16<<10)
				var s *httpserver.Server
				var err error
				if mode == "fast" {
					s, err = httpserver.NewFast(httpserver.HandlerFunc(func(w *httpserver.Response, r *httpserver.Request) {
						if b := int64(r.Conn().Buffered()); b > maxBuffered.Load() {
							maxBuffered.Store(b)
						}
						started()
						_, _ = fmt.Fprintf(w, "%s %s", r.Path(), payload)
					}))
				} else {
					s, err = httpserver.New(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
						started()
						_, _ = fmt.Fprintf(w, "%s %s", r.URL.Path, payload)
					}))
				}
				require.NoError(t, err)
				loop, err := engine.New(c.Options()...)
				require.NoError(t, err)
				t.Cleanup(func() { require.NoError(t, loop.Close()) })
				a, err := s.Listen(loop, "tcp", "127.0.0.1:0", loopgroup.WithConnOptions(engine.WithObserver(obs)))
				require.NoError(t, err)
				t.Cleanup(func() { require.NoError(t, s.Close()) })
				conn := dial(t, "http://"+a.String())
				const n = 1500 // 24 MiB of responses: far more than the socket buffers hold
				go func() {
					for i := range n {
						if _, err := fmt.Fprintf(conn, "GET /%d HTTP/1.1\r\nHost: h\r\n\r\n", i); err != nil {
							return
						}
					}
				}()
				testenv.Eventually(t, 30*time.Second, "the connection unwritable", func() bool {
					c := obs.conn.Load()
					return c != nil && !c.Writable()
				})
				// What the loop was doing when the output passed the high
				// watermark (serving the requests it had read) is over now.
				_, err = engine.Submit(loop, func() (struct{}, error) { return struct{}{}, nil }).Await(context.Background())
				require.NoError(t, err)
				require.Less(t, served.Load(), int64(n), "the server stopped serving a client that does not read")
				require.Zero(t, unwritableRuns.Load(), "a handler started while the connection was unwritable")
				require.LessOrEqual(t, maxBuffered.Load(), int64(64<<10), "engine's default high watermark")
				br := bufio.NewReader(conn)
				for i := range n {
					// A deadline per response: the guard is against no
					// progress, not against a slow machine (24 MiB through
					// an emulated kernel takes a while).
					require.NoError(t, conn.SetReadDeadline(time.Now().Add(30*time.Second)))
					res, err := http.ReadResponse(br, nil)
					require.NoError(t, err, "response %d", i)
					b, err := io.ReadAll(res.Body)
					require.NoError(t, err)
					require.True(t, strings.HasPrefix(string(b), fmt.Sprintf("/%d ", i)), "response %d in order", i)
				}
				require.Zero(t, unwritableRuns.Load(), "a handler started while the connection was unwritable")
				require.LessOrEqual(t, maxBuffered.Load(), int64(64<<10), "engine's default high watermark")
			})
		}
	})
}

// connCatcher keeps the last connection a listener opened.
type connCatcher struct{ conn atomic.Pointer[engine.Conn] }

func (o *connCatcher) ConnOpened(c *engine.Conn)            { o.conn.Store(c) }
func (o *connCatcher) ConnClosed(c *engine.Conn, err error) {}

// TestShutdown: Shutdown closes idle connections at once, lets a request in
// flight finish (its connection then closes), and returns; a new connection
// is refused.
func TestShutdown(t *testing.T) {
	testenv.ForEachBackend(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		release := make(chan struct{})
		entered := make(chan struct{}, 1)
		s, err := httpserver.New(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/slow" {
				entered <- struct{}{}
				<-release
			}
			_, _ = io.WriteString(w, "done "+r.URL.Path)
		}))
		require.NoError(t, err)
		loop, err := engine.New(c.Options()...)
		require.NoError(t, err)
		defer func() { require.NoError(t, loop.Close()) }()
		a, err := s.Listen(loop, "tcp", "127.0.0.1:0")
		require.NoError(t, err)
		base := "http://" + a.String()

		idle := dial(t, base)
		_, err = io.WriteString(idle, "GET /fast HTTP/1.1\r\nHost: h\r\n\r\n")
		require.NoError(t, err)
		res, err := http.ReadResponse(bufio.NewReader(idle), nil)
		require.NoError(t, err)
		res.Body.Close()

		busy := dial(t, base)
		_, err = io.WriteString(busy, "GET /slow HTTP/1.1\r\nHost: h\r\n\r\n")
		require.NoError(t, err)
		<-entered

		done := make(chan error, 1)
		go func() { done <- s.Shutdown(context.Background()) }()
		// the idle connection is closed while the busy one waits
		_, err = idle.Read(make([]byte, 1))
		require.Error(t, err)
		select {
		case err := <-done:
			t.Fatalf("Shutdown returned %v with a request in flight", err)
		default:
		}
		close(release)
		out := readEOF(t, busy)
		require.Contains(t, out, "Connection: close")
		require.Contains(t, out, "done /slow")
		require.NoError(t, <-done)
		_, err = net.DialTimeout("tcp", a.String(), 2*time.Second)
		require.Error(t, err, "listener closed")
	})
}

// TestShutdownDeadline: Shutdown whose context ends closes what is left and
// cancels the in-flight request's context.
func TestShutdownDeadline(t *testing.T) {
	testenv.ForEachBackend(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		cancelled := make(chan struct{})
		entered := make(chan struct{}, 1)
		s, err := httpserver.New(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			entered <- struct{}{}
			<-r.Context().Done()
			close(cancelled)
		}))
		require.NoError(t, err)
		base := onLoop(t, c, s)
		busy := dial(t, base)
		_, err = io.WriteString(busy, "GET /hang HTTP/1.1\r\nHost: h\r\n\r\n")
		require.NoError(t, err)
		<-entered
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		require.ErrorIs(t, s.Shutdown(ctx), context.DeadlineExceeded)
		<-cancelled
		readEOF(t, busy)
	})
}

// TestClientGone: the adapter's request context is cancelled when the client
// closes its connection mid-request.
func TestClientGone(t *testing.T) {
	testenv.ForEachBackend(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		entered := make(chan struct{}, 1)
		cancelled := make(chan error, 1)
		s, err := httpserver.New(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			entered <- struct{}{}
			<-r.Context().Done()
			cancelled <- r.Context().Err()
		}))
		require.NoError(t, err)
		base := onLoop(t, c, s)
		conn := dial(t, base)
		_, err = io.WriteString(conn, "GET / HTTP/1.1\r\nHost: h\r\n\r\n")
		require.NoError(t, err)
		<-entered
		require.NoError(t, conn.Close())
		require.ErrorIs(t, <-cancelled, context.Canceled)
	})
}

// TestPanic: a handler that panics resets its connection; the server goes on
// serving others.
func TestPanic(t *testing.T) {
	testenv.ForEachBackend(t, func(t *testing.T, c testenv.Combo) {
		for _, mode := range []string{"fast", "adapter"} {
			t.Run(mode, func(t *testing.T) {
				testenv.CheckLeaks(t)
				var s *httpserver.Server
				var err error
				if mode == "fast" {
					s, err = httpserver.NewFast(httpserver.HandlerFunc(func(w *httpserver.Response, r *httpserver.Request) {
						if string(r.Path()) == "/panic" {
							panic(http.ErrAbortHandler)
						}
						_, _ = w.WriteString("ok")
					}))
				} else {
					s, err = httpserver.New(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
						if r.URL.Path == "/panic" {
							panic(http.ErrAbortHandler)
						}
						_, _ = io.WriteString(w, "ok")
					}))
				}
				require.NoError(t, err)
				base := onLoop(t, c, s)
				conn := dial(t, base)
				_, err = io.WriteString(conn, "GET /panic HTTP/1.1\r\nHost: h\r\n\r\n")
				require.NoError(t, err)
				require.Empty(t, readEOF(t, conn))
				res, err := http.Get(base + "/")
				require.NoError(t, err)
				b, _ := io.ReadAll(res.Body)
				res.Body.Close()
				require.Equal(t, "ok", string(b))
				http.DefaultClient.CloseIdleConnections()
			})
		}
	})
}

// TestRefusedAnswerReadable: a client refused with 431 while still sending
// reads the whole answer (the server lingers rather than resetting).
func TestRefusedAnswerReadable(t *testing.T) {
	testenv.ForEachBackend(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		s, err := httpserver.NewFast(fastEcho, httpserver.WithLimits(httpserver.Limits{HeaderBytes: 4096}))
		require.NoError(t, err)
		base := onLoop(t, c, s)
		conn := dial(t, base)
		_, err = io.WriteString(conn, "GET / HTTP/1.1\r\nHost: h\r\n"+strings.Repeat("X-Pad: 0123456789\r\n", 1000)+"\r\n")
		require.NoError(t, err)
		res, err := http.ReadResponse(bufio.NewReader(conn), nil)
		require.NoError(t, err)
		require.Equal(t, http.StatusRequestHeaderFieldsTooLarge, res.StatusCode)
	})
}

// TestDeclaredLength: a fast handler that declares a Content-Length gets it
// on the wire; a body longer is cut to it, one shorter ends the connection
// (the client sees a truncated body, never a hang or a desynchronised
// stream). A declared length also frames a flushed (streamed) body.
func TestDeclaredLength(t *testing.T) {
	testenv.ForEachBackend(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		s, err := httpserver.NewFast(httpserver.HandlerFunc(func(w *httpserver.Response, r *httpserver.Request) {
			switch string(r.Path()) {
			case "/long":
				w.SetContentLength(3)
				_, _ = w.WriteString("abcdef")
			case "/short":
				w.SetContentLength(10)
				_, _ = w.WriteString("abcd")
			case "/stream":
				w.SetContentLength(6)
				_, _ = w.WriteString("abc")
				_ = w.Flush()
				_, _ = w.WriteString("def")
			}
		}))
		require.NoError(t, err)
		base := onLoop(t, c, s)
		conn := dial(t, base)
		_, err = io.WriteString(conn, "GET /long HTTP/1.1\r\nHost: h\r\n\r\nGET /stream HTTP/1.1\r\nHost: h\r\n\r\nGET /short HTTP/1.1\r\nHost: h\r\n\r\n")
		require.NoError(t, err)
		br := bufio.NewReader(conn)
		for _, want := range []string{"abc", "abcdef"} {
			res, err := http.ReadResponse(br, nil)
			require.NoError(t, err)
			b, err := io.ReadAll(res.Body)
			require.NoError(t, err)
			require.Equal(t, want, string(b))
			require.Empty(t, res.TransferEncoding)
		}
		res, err := http.ReadResponse(br, nil)
		require.NoError(t, err)
		_, err = io.ReadAll(res.Body)
		require.ErrorIs(t, err, io.ErrUnexpectedEOF)
	})
}

// TestResponseController: Flush goes through http.ResponseController (the
// client sees the first piece before the handler finishes); EnableFullDuplex
// is refused with http.ErrNotSupported, as documented; a read deadline on
// a request without a body has nothing to bound and is accepted (the
// deadline setters: deadline_test.go; Hijack: hijack_test.go).
func TestResponseController(t *testing.T) {
	testenv.ForEachBackend(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		errs := make(chan error, 2)
		release := make(chan struct{})
		s, err := httpserver.New(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			rc := http.NewResponseController(w)
			errs <- rc.EnableFullDuplex()
			errs <- rc.SetReadDeadline(time.Now())
			_, _ = io.WriteString(w, "first;")
			if err := rc.Flush(); err != nil {
				panic(err)
			}
			<-release
			_, _ = io.WriteString(w, "second")
		}))
		require.NoError(t, err)
		base := onLoop(t, c, s)
		conn := dial(t, base)
		_, err = io.WriteString(conn, "GET / HTTP/1.1\r\nHost: h\r\n\r\n")
		require.NoError(t, err)
		res, err := http.ReadResponse(bufio.NewReader(conn), nil)
		require.NoError(t, err)
		require.Equal(t, []string{"chunked"}, res.TransferEncoding)
		first := make([]byte, len("first;"))
		_, err = io.ReadFull(res.Body, first)
		require.NoError(t, err)
		require.Equal(t, "first;", string(first), "flushed before the handler returned")
		close(release)
		rest, err := io.ReadAll(res.Body)
		require.NoError(t, err)
		require.Equal(t, "second", string(rest))
		require.ErrorIs(t, <-errs, http.ErrNotSupported)
		require.NoError(t, <-errs)
	})
}

// TestHeaderLineLimit: the header-line limit counts every field line, Host
// included: a request with exactly that many is served, one more line gets
// 431 and the connection closes. The trailers of a chunked body have the
// same limit (a streamed body's handler reads an error past it). The default is DefaultMaxHeaders; WithLimits sets another.
func TestHeaderLineLimit(t *testing.T) {
	testenv.ForEachBackend(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		for _, tc := range []struct {
			name  string
			limit int
			opts  []httpserver.Option
		}{
			{"default", httpserver.DefaultMaxHeaders, nil},
			{"WithLimits", 10, []httpserver.Option{httpserver.WithLimits(httpserver.Limits{Headers: 10})}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				fast, err := httpserver.NewFast(fastEcho, tc.opts...)
				require.NoError(t, err)
				adapter, err := httpserver.New(stdEcho, tc.opts...)
				require.NoError(t, err)
				for name, base := range map[string]string{"fast": onLoop(t, c, fast), "adapter": onLoop(t, c, adapter)} {
					// n field lines: Host and n-1 others.
					headers := func(n int) string { return "GET / HTTP/1.1\r\nHost: h\r\n" + headerLines(n-1) + "\r\n" }
					// n trailer lines after an empty chunked body.
					trailers := func(n int) string {
						return "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n" + headerLines(n) + "\r\n"
					}
					for _, req := range []struct {
						what string
						raw  string
						code int
					}{
						{"headers at the limit", headers(tc.limit), http.StatusOK},
						{"headers past the limit", headers(tc.limit + 1), http.StatusRequestHeaderFieldsTooLarge},
						{"trailers at the limit", trailers(tc.limit), http.StatusOK},
						{"trailers past the limit", trailers(tc.limit + 1), http.StatusRequestHeaderFieldsTooLarge},
					} {
						conn := dial(t, base)
						_, err := io.WriteString(conn, req.raw)
						require.NoError(t, err)
						br := bufio.NewReader(conn)
						res, err := http.ReadResponse(br, nil)
						require.NoError(t, err, "%s: %s", name, req.what)
						body, err := io.ReadAll(res.Body)
						require.NoError(t, err)
						if name == "adapter" && req.what == "trailers past the limit" {
							// A streamed body: its handler reads the
							// error, as with net/http, and answers.
							require.Equal(t, http.StatusBadRequest, res.StatusCode, "%s: %s\n%s", name, req.what, body)
							require.Contains(t, string(body), "trailers too large")
							require.True(t, res.Close, "the connection closes after a broken body")
							continue
						}
						require.Equal(t, req.code, res.StatusCode, "%s: %s\n%s", name, req.what, body)
						if req.code == http.StatusOK {
							last := fmt.Sprintf("X-H%04d: v", tc.limit-2) // the last header line
							if strings.HasPrefix(req.what, "trailers") {
								last = fmt.Sprintf("X-H%04d: v", tc.limit-1)
							}
							require.Contains(t, string(body), last, "%s: %s: the last line was read", name, req.what)
							continue
						}
						require.True(t, res.Close, "%s: %s: the refusal says it closes", name, req.what)
						_, err = br.ReadByte() // EOF (or a reset): anything but a timeout
						var ne net.Error
						require.False(t, err == nil || errors.As(err, &ne) && ne.Timeout(),
							"%s: %s: the connection stays open after the refusal (%v)", name, req.what, err)
					}
				}
			})
		}
	})
}

// TestPipelinedThenHalfClose: requests pipelined before the client shuts
// down its write side are all answered, then the connection closes, on
// every API. The adapter on goroutines used to see the shutdown before
// its first handler returned and answer only that one, closing. The race
// is the point, so each variant tries it many times.
func TestPipelinedThenHalfClose(t *testing.T) {
	testenv.ForEachBackend(t, func(t *testing.T, c testenv.Combo) {
		for _, v := range variants {
			t.Run(v.name, func(t *testing.T) {
				testenv.CheckLeaks(t)
				s, err := v.make()
				require.NoError(t, err)
				base := onLoop(t, c, s)
				for i := range 50 {
					conn := dial(t, base)
					_, err := io.WriteString(conn, "GET /1 HTTP/1.1\r\nHost: a\r\n\r\nGET /2 HTTP/1.1\r\nHost: a\r\n\r\n")
					require.NoError(t, err)
					require.NoError(t, conn.(*net.TCPConn).CloseWrite())
					br := bufio.NewReader(conn)
					for _, path := range []string{"/1", "/2"} {
						res, err := http.ReadResponse(br, nil)
						require.NoError(t, err, "run %d: response to %s", i, path)
						b, err := io.ReadAll(res.Body)
						require.NoError(t, err)
						require.Contains(t, string(b), "uri="+path, "run %d", i)
						if path == "/1" {
							require.False(t, res.Close, "run %d: /1 is not the last request", i)
						}
					}
					_, err = br.ReadByte()
					require.ErrorIs(t, err, io.EOF, "run %d: closed after the last answer", i)
					require.NoError(t, conn.Close())
				}
			})
		}
	})
}

// TestHeaderTimeoutNeverEarly: the header timeout counts from the first
// byte the server read, so a connection is never cut before the timeout has
// passed since the client sent it (the client's clock read before it
// dialled is a lower bound of that), and it is cut eventually. It used to
// count from the loop's last tick and fire up to a tick early. Connections
// start a fraction of a tick apart so that one of them lands just after a
// tick.
func TestHeaderTimeoutNeverEarly(t *testing.T) {
	const timeout = 400 * time.Millisecond // a 100 ms tick
	testenv.ForEachBackendParallel(t, func(t *testing.T, c testenv.Combo) {
		s, err := httpserver.NewFast(fastEcho, httpserver.WithTimeouts(httpserver.Timeouts{ReadHeader: timeout, Read: httpserver.NoTimeout, Idle: time.Minute}))
		require.NoError(t, err)
		base := onLoop(t, c, s)
		const conns = 4
		lived := make(chan time.Duration, conns)
		for range conns {
			start := time.Now()
			conn := dial(t, base)
			_, err := io.WriteString(conn, "GET / HTTP/1.1\r\n")
			require.NoError(t, err)
			go func() {
				_, _ = io.Copy(io.Discard, conn) // until the server closes (or the 30 s deadline)
				lived <- time.Since(start)
			}()
			time.Sleep(timeout / 4 / conns) // the client's pace, not a wait for the server
		}
		for range conns {
			d := <-lived
			require.GreaterOrEqual(t, d, timeout, "closed before the header timeout passed")
			require.Less(t, d, 25*time.Second, "closed by the header timeout, not the test's deadline")
		}
	})
}

// TestConnectionCloseHeader: a fast handler's "Connection: close"
// (AddHeader, on the Response or on its Deferred) goes out and the server
// closes the keep-alive connection after that response, as net/http does.
func TestConnectionCloseHeader(t *testing.T) {
	testenv.ForEachBackend(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		s, err := httpserver.NewFast(httpserver.HandlerFunc(func(w *httpserver.Response, r *httpserver.Request) {
			if string(r.Path()) != "/defer" {
				w.AddHeader("Connection", "close")
				_, _ = w.WriteString("now")
				return
			}
			d := w.Defer()
			go func() {
				d.AddHeader("Connection", "close")
				_, _ = d.WriteString("later")
				_ = d.Finish()
			}()
		}))
		require.NoError(t, err)
		base := onLoop(t, c, s)
		for path, body := range map[string]string{"/": "now", "/defer": "later"} {
			conn := dial(t, base)
			_, err := io.WriteString(conn, "GET "+path+" HTTP/1.1\r\nHost: h\r\n\r\n")
			require.NoError(t, err)
			got := readEOF(t, conn)
			require.True(t, strings.HasPrefix(got, "HTTP/1.1 200 OK\r\n"), "%s: %q", path, got)
			require.Contains(t, got, "\r\nConnection: close\r\n", path)
			require.True(t, strings.HasSuffix(got, "\r\n\r\n"+body), "%s: %q", path, got)
		}
	})
}

// TestServerHeader: no Server header (as net/http: it tells a scanner what
// to try), on every API, on answers and on refusals; a handler that wants
// one sets it.
func TestServerHeader(t *testing.T) {
	testenv.ForEachBackend(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		fast, err := httpserver.NewFast(fastEcho)
		require.NoError(t, err)
		adapter, err := httpserver.New(stdEcho)
		require.NoError(t, err)
		inline, err := httpserver.New(stdEcho, httpserver.WithInlineHTTP())
		require.NoError(t, err)
		for api, base := range map[string]string{"fast": onLoop(t, c, fast), "adapter": onLoop(t, c, adapter), "inline": onLoop(t, c, inline)} {
			for _, raw := range []string{
				"GET / HTTP/1.1\r\nHost: h\r\n\r\n",
				"POST / HTTP/1.1\r\nHost: h\r\nExpect: teapot\r\nContent-Length: 0\r\n\r\n",
			} {
				conn := dial(t, base)
				_, err := io.WriteString(conn, raw)
				require.NoError(t, err)
				res, err := http.ReadResponse(bufio.NewReader(conn), nil)
				require.NoError(t, err)
				res.Body.Close()
				got, ok := res.Header["Server"]
				require.False(t, ok, "%s: %q: Server header %q", api, raw, got)
			}
		}
	})
}
