package httpserver_test

// The write side's timeouts (Timeouts.Write, Timeouts.WriteStall) and the
// adapter's per-request deadlines (http.ResponseController's
// SetWriteDeadline and SetReadDeadline). Every wait is on a condition
// with a generous deadline; the only timing asserted is that a deadline
// never fires before it has elapsed.

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/httpserver"
	"github.com/ringloop/ringloop/internal/testenv"
	"github.com/ringloop/ringloop/loopgroup"
)

// freedWithin bounds the wait for a handler to be freed: a guard against
// no progress, not a measure of speed.
const freedWithin = 30 * time.Second

// stoppedReader dials base with a 4 KiB receive buffer and never reads: a
// client that stopped reading, whose window fills at once.
func stoppedReader(t *testing.T, base string) net.Conn {
	t.Helper()
	d := net.Dialer{Timeout: 5 * time.Second, Control: func(_, _ string, rc syscall.RawConn) error {
		var serr error
		err := rc.Control(func(fd uintptr) {
			serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096)
		})
		return cmp.Or(err, serr)
	}}
	c, err := d.Dial("tcp", strings.TrimPrefix(base, "http://"))
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// streamEnd is how a streaming handler ended: the error its Write or
// Flush returned, when, and its context's cause (the adapter).
type streamEnd struct {
	err   error
	at    time.Time
	cause error
}

// adapterStreamer streams 16 KiB pieces with a Flush each until a write
// fails (or total bytes are written, when total > 0), then waits for its
// context and reports. setup runs first, with the request's controller.
func adapterStreamer(ends chan<- streamEnd, total int, setup func(r *http.Request, rc *http.ResponseController)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		rc := http.NewResponseController(w)
		if setup != nil {
			setup(r, rc)
		}
		piece := bytes.Repeat([]byte("s"), 16<<10)
		var end streamEnd
		for n := 0; total <= 0 || n < total; n += len(piece) {
			if _, err := w.Write(piece); err != nil {
				end.err = err
				break
			}
			if err := rc.Flush(); err != nil {
				end.err = err
				break
			}
		}
		end.at = time.Now()
		if end.err != nil {
			select {
			case <-r.Context().Done():
				end.cause = context.Cause(r.Context())
			case <-time.After(freedWithin):
			}
		}
		ends <- end
	}
}

// deferredStreamer is the fast API's streaming handler: a Deferred
// flushed piece by piece from a goroutine until Flush fails.
func deferredStreamer(ends chan<- streamEnd) httpserver.Handler {
	return httpserver.HandlerFunc(func(w *httpserver.Response, r *httpserver.Request) {
		d := w.Defer()
		go func() {
			piece := bytes.Repeat([]byte("s"), 16<<10)
			for {
				_, _ = d.Write(piece)
				if err := d.Flush(); err != nil {
					ends <- streamEnd{err: err, at: time.Now()}
					_ = d.Finish()
					return
				}
			}
		}()
	})
}

// waitEnd waits for a streaming handler's end.
func waitEnd(t *testing.T, ends <-chan streamEnd) streamEnd {
	t.Helper()
	select {
	case e := <-ends:
		return e
	case <-time.After(freedWithin):
		t.Fatalf("the handler was not freed in %v", freedWithin)
	}
	return streamEnd{}
}

// requireFreed checks how a handler streaming to a stopped reader ended:
// its write failed with a timeout naming what, the adapter's context was
// cancelled with it, and not before the deadline (which counts from after
// sent). It logs how long after the deadline the handler was freed.
func requireFreed(t *testing.T, e streamEnd, adapter bool, what string, sent time.Time, d time.Duration) {
	t.Helper()
	require.ErrorIs(t, e.err, os.ErrDeadlineExceeded)
	require.ErrorContains(t, e.err, what)
	if adapter {
		require.ErrorIs(t, e.cause, os.ErrDeadlineExceeded, "the context's cause")
	}
	require.False(t, e.at.Before(sent.Add(d)), "freed %v before the deadline", sent.Add(d).Sub(e.at))
	t.Logf("freed %v after the deadline", e.at.Sub(sent.Add(d)))
}

// TestWriteTimeout: a handler streaming to a client that stopped reading
// is freed by Timeouts.Write (the adapter's Write fails and its context
// is cancelled; the fast API's Deferred.Flush fails), and a whole response
// too large for the socket is reset: the connection goes.
func TestWriteTimeout(t *testing.T) {
	const d = 300 * time.Millisecond
	opt := httpserver.WithTimeouts(httpserver.Timeouts{Write: d, WriteStall: httpserver.NoTimeout})
	big := strings.Repeat("b", 8<<20)
	testenv.ForEachParallel(t, func(t *testing.T, c testenv.Combo) {
		for _, mode := range []string{"adapter", "fast", "adapter-whole", "inline-whole", "fast-whole"} {
			t.Run(mode, func(t *testing.T) {
				t.Parallel()
				ends := make(chan streamEnd, 1)
				var s *httpserver.Server
				var err error
				switch mode {
				case "adapter":
					s, err = httpserver.New(adapterStreamer(ends, 0, nil), opt)
				case "fast":
					s, err = httpserver.NewFast(deferredStreamer(ends), opt)
				case "adapter-whole", "inline-whole":
					more := []httpserver.Option{opt}
					if mode == "inline-whole" {
						more = append(more, httpserver.WithInlineHTTP())
					}
					s, err = httpserver.New(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
						_, _ = io.WriteString(w, big)
					}), more...)
				case "fast-whole":
					s, err = httpserver.NewFast(httpserver.HandlerFunc(func(w *httpserver.Response, r *httpserver.Request) {
						_, _ = w.WriteString(big)
					}), opt)
				}
				require.NoError(t, err)
				base := onLoop(t, c, s)
				conn := stoppedReader(t, base)
				sent := time.Now()
				_, err = io.WriteString(conn, "GET / HTTP/1.1\r\nHost: h\r\n\r\n")
				require.NoError(t, err)
				if mode == "adapter" || mode == "fast" {
					requireFreed(t, waitEnd(t, ends), mode == "adapter", "write deadline", sent, d)
				}
				testenv.Eventually(t, freedWithin, "the connection reset", func() bool { return s.Metrics().Connections == 0 })
			})
		}
	})
}

// TestWriteTimeoutFastClient: a generous Timeouts.Write does not touch a
// client that reads: several streamed responses of 4 MiB on one
// keep-alive connection arrive whole, on both APIs.
func TestWriteTimeoutFastClient(t *testing.T) {
	const total = 4 << 20
	opt := httpserver.WithTimeouts(httpserver.Timeouts{Write: time.Minute})
	testenv.ForEachBackend(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		ends := make(chan streamEnd, 8)
		a, err := httpserver.New(adapterStreamer(ends, total, nil), opt)
		require.NoError(t, err)
		f, err := httpserver.NewFast(httpserver.HandlerFunc(func(w *httpserver.Response, r *httpserver.Request) {
			d := w.Defer()
			go func() {
				piece := bytes.Repeat([]byte("s"), 16<<10)
				for n := 0; n < total; n += len(piece) {
					_, _ = d.Write(piece)
					if err := d.Flush(); err != nil {
						ends <- streamEnd{err: err}
						return
					}
				}
				ends <- streamEnd{err: d.Finish()}
			}()
		}), opt)
		require.NoError(t, err)
		for name, base := range map[string]string{"adapter": onLoop(t, c, a), "fast": onLoop(t, c, f)} {
			t.Run(name, func(t *testing.T) {
				tr := &http.Transport{}
				defer tr.CloseIdleConnections()
				for i := range 3 {
					res, err := (&http.Client{Transport: tr, Timeout: freedWithin}).Get(base + "/")
					require.NoError(t, err)
					n, err := io.Copy(io.Discard, res.Body)
					res.Body.Close()
					require.NoError(t, err, "response %d", i)
					require.EqualValues(t, total, n, "response %d", i)
					require.NoError(t, waitEnd(t, ends).err, "response %d", i)
				}
			})
		}
	})
}

// TestSetWriteDeadline: with Timeouts.Write unset, a handler's
// SetWriteDeadline bounds its own response (a stopped reader frees it as
// Timeouts.Write would); a deadline already past fails the next Write at
// once; the zero time clears a deadline, so a response streamed well past
// the cleared one to a reading client arrives whole.
func TestSetWriteDeadline(t *testing.T) {
	const d = 300 * time.Millisecond
	testenv.ForEachBackendParallel(t, func(t *testing.T, c testenv.Combo) {
		ends := make(chan streamEnd, 1)
		var sent atomic.Pointer[time.Time]
		cut := adapterStreamer(ends, 0, func(r *http.Request, rc *http.ResponseController) {
			assert.NoError(t, rc.SetWriteDeadline(time.Now().Add(d)))
		})
		mux := http.NewServeMux()
		mux.Handle("/cut", cut)
		pastErr := make(chan error, 1)
		mux.HandleFunc("/past", func(w http.ResponseWriter, r *http.Request) {
			if err := http.NewResponseController(w).SetWriteDeadline(time.Now().Add(-time.Second)); err != nil {
				pastErr <- err
				return
			}
			_, err := io.WriteString(w, strings.Repeat("p", 8<<10))
			pastErr <- err
		})
		mux.HandleFunc("/clear", func(w http.ResponseWriter, r *http.Request) {
			rc := http.NewResponseController(w)
			assert.NoError(t, rc.SetWriteDeadline(time.Now().Add(50*time.Millisecond)))
			assert.NoError(t, rc.SetWriteDeadline(time.Time{}))
			// Stream for longer than the cleared deadline plus the
			// loop's tick (at most half a second): a deadline left set
			// would cut it.
			start, n := time.Now(), 0
			for time.Since(start) < 1500*time.Millisecond {
				if _, err := io.WriteString(w, "0123456789"); err != nil {
					break
				}
				n++
				if err := rc.Flush(); err != nil {
					break
				}
				time.Sleep(5 * time.Millisecond) // the handler's pace
			}
			_, _ = fmt.Fprintf(w, "|%d", n)
		})
		s, err := httpserver.New(mux, httpserver.WithTimeouts(httpserver.Timeouts{WriteStall: httpserver.NoTimeout}))
		require.NoError(t, err)
		base := onLoop(t, c, s)
		// After the subtests, which run at once (each on its own
		// connection), before the server closes.
		t.Cleanup(func() {
			testenv.Eventually(t, freedWithin, "every connection closed", func() bool { return s.Metrics().Connections == 0 })
		})

		t.Run("cut", func(t *testing.T) {
			t.Parallel()
			conn := stoppedReader(t, base)
			now := time.Now()
			sent.Store(&now)
			_, err := io.WriteString(conn, "GET /cut HTTP/1.1\r\nHost: h\r\n\r\n")
			require.NoError(t, err)
			requireFreed(t, waitEnd(t, ends), true, "SetWriteDeadline", *sent.Load(), d)
		})
		t.Run("past", func(t *testing.T) {
			t.Parallel()
			conn := dial(t, base)
			_, err := io.WriteString(conn, "GET /past HTTP/1.1\r\nHost: h\r\n\r\n")
			require.NoError(t, err)
			require.ErrorIs(t, <-pastErr, os.ErrDeadlineExceeded)
			readEOF(t, conn)
		})
		t.Run("clear", func(t *testing.T) {
			t.Parallel()
			tr := &http.Transport{}
			defer tr.CloseIdleConnections()
			res, err := (&http.Client{Transport: tr, Timeout: freedWithin}).Get(base + "/clear")
			require.NoError(t, err)
			defer res.Body.Close()
			b, err := io.ReadAll(res.Body)
			require.NoError(t, err)
			body := string(b)
			i := strings.LastIndexByte(body, '|')
			require.Positive(t, i, "the whole response")
			n, err := strconv.Atoi(body[i+1:])
			require.NoError(t, err)
			require.Equal(t, strings.Repeat("0123456789", n), body[:i])
		})
	})
}

// TestSetReadDeadline: a handler's SetReadDeadline on a streamed upload
// whose client stops sending: Read returns what came, then an error
// wrapping os.ErrDeadlineExceeded; the handler still answers and the
// connection closes after the answer. The zero time clears the deadline
// (Timeouts.Read's too): an upload that pauses well past the cleared one
// arrives whole.
func TestSetReadDeadline(t *testing.T) {
	const d = 300 * time.Millisecond
	testenv.ForEachBackendParallel(t, func(t *testing.T, c testenv.Combo) {
		type readEnd struct {
			n   int
			err error
			at  time.Time
		}
		// How each path's handler ended: the subtests run at once.
		ends := map[string]chan readEnd{"/stall": make(chan readEnd, 1), "/clear": make(chan readEnd, 1)}
		firstHalf := make(chan struct{}, 1)
		s, err := httpserver.New(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			rc := http.NewResponseController(w)
			var e readEnd
			switch r.URL.Path {
			case "/stall":
				assert.NoError(t, rc.SetReadDeadline(time.Now().Add(d)))
				var b []byte
				b, e.err = io.ReadAll(r.Body)
				e.n, e.at = len(b), time.Now()
				w.WriteHeader(http.StatusRequestTimeout)
			case "/clear":
				assert.NoError(t, rc.SetReadDeadline(time.Now().Add(50*time.Millisecond)))
				assert.NoError(t, rc.SetReadDeadline(time.Time{}))
				half := make([]byte, 500)
				_, e.err = io.ReadFull(r.Body, half)
				firstHalf <- struct{}{}
				if e.err == nil {
					var rest []byte
					rest, e.err = io.ReadAll(r.Body)
					e.n = len(half) + len(rest)
				}
			}
			ends[r.URL.Path] <- e
			_, _ = fmt.Fprintf(w, "%d", e.n)
		}), httpserver.WithTimeouts(httpserver.Timeouts{Read: 200 * time.Millisecond}))
		require.NoError(t, err)
		base := onLoop(t, c, s)

		t.Run("stall", func(t *testing.T) {
			t.Parallel()
			conn := dial(t, base)
			sent := time.Now()
			_, err := io.WriteString(conn, "POST /stall HTTP/1.1\r\nHost: h\r\nContent-Length: 100000\r\n\r\n"+strings.Repeat("u", 1000))
			require.NoError(t, err)
			e := <-ends["/stall"]
			require.ErrorIs(t, e.err, os.ErrDeadlineExceeded)
			require.ErrorContains(t, e.err, "SetReadDeadline")
			require.Equal(t, 1000, e.n, "the bytes that came before the deadline")
			require.False(t, e.at.Before(sent.Add(d)), "the read deadline fired early")
			res, err := http.ReadResponse(bufio.NewReader(conn), nil)
			require.NoError(t, err)
			b, _ := io.ReadAll(res.Body)
			require.Equal(t, http.StatusRequestTimeout, res.StatusCode)
			require.Equal(t, "1000", string(b))
			require.True(t, res.Close, "the connection closes after the answer")
		})
		t.Run("clear", func(t *testing.T) {
			t.Parallel()
			conn := dial(t, base)
			_, err := io.WriteString(conn, "POST /clear HTTP/1.1\r\nHost: h\r\nContent-Length: 1000\r\n\r\n"+strings.Repeat("u", 500))
			require.NoError(t, err)
			<-firstHalf
			// The client's pause: longer than the cleared deadline, the
			// read timeout and a tick of the loop together.
			time.Sleep(1500 * time.Millisecond)
			_, err = io.WriteString(conn, strings.Repeat("u", 500))
			require.NoError(t, err)
			e := <-ends["/clear"]
			require.NoError(t, e.err)
			res, err := http.ReadResponse(bufio.NewReader(conn), nil)
			require.NoError(t, err)
			b, _ := io.ReadAll(res.Body)
			require.Equal(t, http.StatusOK, res.StatusCode)
			require.Equal(t, "1000", string(b))
		})
	})
}

// TestWriteStall: by default a client that stops reading cannot hold a
// handler or a connection: past Timeouts.WriteStall with its output over
// the high watermark the connection is reset, freeing the adapter's
// handler (its Write fails, its context is cancelled), the fast API's
// Deferred and a connection whose client pipelines requests without
// reading.
func TestWriteStall(t *testing.T) {
	const d = 300 * time.Millisecond
	opt := httpserver.WithTimeouts(httpserver.Timeouts{WriteStall: d})
	testenv.ForEachBackendParallel(t, func(t *testing.T, c testenv.Combo) {
		for _, mode := range []string{"adapter", "fast", "pipelined"} {
			t.Run(mode, func(t *testing.T) {
				t.Parallel()
				ends := make(chan streamEnd, 1)
				var s *httpserver.Server
				var err error
				switch mode {
				case "adapter":
					s, err = httpserver.New(adapterStreamer(ends, 0, nil), opt)
				case "fast":
					s, err = httpserver.NewFast(deferredStreamer(ends), opt)
				case "pipelined":
					s, err = httpserver.NewFast(httpserver.HandlerFunc(func(w *httpserver.Response, r *httpserver.Request) {
						_, _ = w.WriteString(strings.Repeat("p", 16<<10))
					}), opt)
				}
				require.NoError(t, err)
				base := onLoop(t, c, s)
				conn := stoppedReader(t, base)
				sent := time.Now()
				if mode == "pipelined" {
					go func() {
						for {
							if _, err := io.WriteString(conn, "GET / HTTP/1.1\r\nHost: h\r\n\r\n"); err != nil {
								return // reset by the server
							}
						}
					}()
				} else {
					_, err = io.WriteString(conn, "GET / HTTP/1.1\r\nHost: h\r\n\r\n")
					require.NoError(t, err)
					requireFreed(t, waitEnd(t, ends), mode == "adapter", "WriteStall", sent, d)
				}
				testenv.Eventually(t, freedWithin, "the connection reset", func() bool { return s.Metrics().Connections == 0 })
			})
		}
	})
}

// TestWriteTimeoutsOff: with Timeouts.Write and WriteStall both NoTimeout
// a client that stops reading holds its handler for as long as it does —
// the loop's tick has run many times meanwhile (side connections closed by
// a short idle timeout show it) — and then gets the whole response.
func TestWriteTimeoutsOff(t *testing.T) {
	const total = 4 << 20
	testenv.ForEachBackendParallel(t, func(t *testing.T, c testenv.Combo) {
		ends := make(chan streamEnd, 1)
		s, err := httpserver.New(adapterStreamer(ends, total, nil), httpserver.WithTimeouts(httpserver.Timeouts{
			Write: httpserver.NoTimeout, WriteStall: httpserver.NoTimeout, Idle: 50 * time.Millisecond,
			ReadHeader: httpserver.NoTimeout}))
		require.NoError(t, err)
		loop, err := engine.New(c.Options()...)
		require.NoError(t, err)
		t.Cleanup(func() { require.NoError(t, loop.Close()) })
		obs := &connCatcher{}
		a, err := s.Listen(loop, "tcp", "127.0.0.1:0", loopgroup.WithConnOptions(engine.WithObserver(obs)))
		require.NoError(t, err)
		t.Cleanup(func() { require.NoError(t, s.Close()) })
		base := "http://" + a.String()
		conn := stoppedReader(t, base)
		_, err = io.WriteString(conn, "GET / HTTP/1.1\r\nHost: h\r\n\r\n")
		require.NoError(t, err)
		testenv.Eventually(t, freedWithin, "the connection unwritable", func() bool {
			c := obs.conn.Load()
			return c != nil && !c.Writable()
		})
		for range 5 {
			side := dial(t, base)
			require.Empty(t, readEOF(t, side), "an idle side connection closed by the tick")
		}
		select {
		case e := <-ends:
			t.Fatalf("the handler ended while its client was not reading: %v", e.err)
		default:
		}
		require.NoError(t, conn.SetReadDeadline(time.Now().Add(freedWithin)))
		res, err := http.ReadResponse(bufio.NewReader(conn), nil)
		require.NoError(t, err)
		n, err := io.Copy(io.Discard, res.Body)
		require.NoError(t, err)
		require.EqualValues(t, total, n)
		require.NoError(t, waitEnd(t, ends).err)
	})
}

// TestWriteTimeoutTLS: over TLS (records encrypted on the loop) a handler
// streaming to a client that stopped reading is freed by Timeouts.Write as
// over TCP, on both APIs.
func TestWriteTimeoutTLS(t *testing.T) {
	const d = 300 * time.Millisecond
	p := testenv.NewPKI(t)
	opts := []httpserver.Option{httpserver.WithTimeouts(httpserver.Timeouts{Write: d, WriteStall: httpserver.NoTimeout}),
		httpserver.WithTLSConfig(serverTLS(t, p))}
	testenv.ForEachBackendParallel(t, func(t *testing.T, c testenv.Combo) {
		for _, mode := range []string{"adapter", "fast"} {
			t.Run(mode, func(t *testing.T) {
				t.Parallel()
				ends := make(chan streamEnd, 1)
				var s *httpserver.Server
				var err error
				if mode == "adapter" {
					s, err = httpserver.New(adapterStreamer(ends, 0, nil), opts...)
				} else {
					s, err = httpserver.NewFast(deferredStreamer(ends), opts...)
				}
				require.NoError(t, err)
				addr := onLoopTLS(t, c, s, "", "")
				tc := tls.Client(stoppedReader(t, addr), clientTLS(p))
				require.NoError(t, tc.SetDeadline(time.Now().Add(freedWithin)))
				require.NoError(t, tc.Handshake())
				sent := time.Now()
				_, err = io.WriteString(tc, "GET / HTTP/1.1\r\nHost: localhost\r\n\r\n")
				require.NoError(t, err)
				requireFreed(t, waitEnd(t, ends), mode == "adapter", "write deadline", sent, d)
				testenv.Eventually(t, freedWithin, "the connection reset", func() bool { return s.Metrics().Connections == 0 })
			})
		}
	})
}
