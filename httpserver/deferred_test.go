package httpserver_test

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ringloop/ringloop/httpserver"
	"github.com/ringloop/ringloop/internal/testenv"
)

// TestDeferred: 10k requests, pipelined 16 deep on 4 connections, each
// deferred by its handler and answered by a pool of goroutines. Every
// response arrives once, in order, byte for byte as the fast API frames it
// (the Date value aside).
func TestDeferred(t *testing.T) {
	testenv.ForEachBackend(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		type job struct {
			d    *httpserver.Deferred
			path string
		}
		jobs := make(chan job, 1024)
		var workers sync.WaitGroup
		errs := make(chan error, 1)
		for range 4 {
			workers.Add(1)
			go func() {
				defer workers.Done()
				for j := range jobs {
					j.d.AddHeader("X-Seq", j.path)
					_, _ = j.d.WriteString("answer " + j.path)
					if err := j.d.Finish(); err != nil {
						select {
						case errs <- err:
						default:
						}
					}
				}
			}()
		}
		// Registered before the server starts, so it runs after the server
		// closed: no handler sends on jobs any more.
		t.Cleanup(func() { close(jobs); workers.Wait() })
		s, err := httpserver.NewFast(httpserver.HandlerFunc(func(w *httpserver.Response, r *httpserver.Request) {
			path := string(r.Path())
			w.AddHeader("X-Path", path) // set before Defer: carries over
			jobs <- job{w.Defer(), path}
		}))
		require.NoError(t, err)
		base := onLoop(t, c, s)

		const conns, perConn, depth = 4, 2500, 16
		var wg sync.WaitGroup
		fail := make(chan error, conns)
		for ci := range conns {
			wg.Add(1)
			go func() {
				defer wg.Done()
				fail <- deferredClient(dial(t, base), ci, perConn, depth)
			}()
		}
		wg.Wait()
		for range conns {
			require.NoError(t, <-fail)
		}
		select {
		case err := <-errs:
			t.Fatalf("Finish: %v", err)
		default:
		}
	})
}

// deferredClient sends n requests in batches of depth and checks each
// response byte for byte.
func deferredClient(conn io.ReadWriter, ci, n, depth int) error {
	br := bufio.NewReader(conn)
	var req strings.Builder
	for i := 0; i < n; i += depth {
		req.Reset()
		for k := i; k < min(n, i+depth); k++ {
			fmt.Fprintf(&req, "GET /%d/%d HTTP/1.1\r\nHost: h\r\n\r\n", ci, k)
		}
		if _, err := io.WriteString(conn, req.String()); err != nil {
			return err
		}
		for k := i; k < min(n, i+depth); k++ {
			path := fmt.Sprintf("/%d/%d", ci, k)
			body := "answer " + path
			line, err := br.ReadString('\n')
			if err != nil || line != "HTTP/1.1 200 OK\r\n" {
				return fmt.Errorf("response %s: status line %q (%v)", path, line, err)
			}
			date, err := br.ReadString('\n')
			if err != nil || !strings.HasPrefix(date, "Date: ") || len(date) != len("Date: Mon, 02 Jan 2006 15:04:05 GMT\r\n") {
				return fmt.Errorf("response %s: date line %q (%v)", path, date, err)
			}
			want := fmt.Sprintf("X-Path: %s\r\nX-Seq: %s\r\nContent-Length: %d\r\n\r\n%s", path, path, len(body), body)
			got := make([]byte, len(want))
			if _, err := io.ReadFull(br, got); err != nil || string(got) != want {
				return fmt.Errorf("response %s: got %q, want %q (%v)", path, got, want, err)
			}
		}
	}
	return nil
}

// TestDeferredEdges: a streamed response deferred after its first piece is
// finished in order; Flush on the handed-over Response and Finish twice are
// refused; a deferred response whose
// connection the server closed is not sent and Finish says so.
func TestDeferredEdges(t *testing.T) {
	testenv.ForEachBackend(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		held := make(chan *httpserver.Deferred, 1)
		s, err := httpserver.NewFast(httpserver.HandlerFunc(func(w *httpserver.Response, r *httpserver.Request) {
			switch string(r.Path()) {
			case "/stream":
				_, _ = w.WriteString("first;")
				_ = w.Flush()
				d := w.Defer()
				if w.Flush() == nil {
					panic("Flush after Defer accepted: it would write out of order")
				}
				go func() {
					_, _ = d.WriteString("second")
					if err := d.Finish(); err != nil {
						panic(err)
					}
					if d.Finish() != httpserver.ErrFinished {
						panic("second Finish accepted")
					}
				}()
			case "/hold":
				held <- w.Defer()
			default:
				_, _ = w.WriteString("next " + string(r.Path()))
			}
		}))
		require.NoError(t, err)
		base := onLoop(t, c, s)

		conn := dial(t, base)
		_, err = io.WriteString(conn, "GET /stream HTTP/1.1\r\nHost: h\r\n\r\nGET /after HTTP/1.1\r\nHost: h\r\n\r\n")
		require.NoError(t, err)
		br := bufio.NewReader(conn)
		for _, want := range []string{"first;second", "next /after"} {
			res, err := http.ReadResponse(br, nil)
			require.NoError(t, err)
			b, err := io.ReadAll(res.Body)
			require.NoError(t, err)
			require.Equal(t, want, string(b))
		}
		require.NoError(t, conn.Close())

		// Reading pauses while a response is deferred, so the server learns
		// the connection is gone when it closes it (here Close; Shutdown's
		// deadline does the same).
		gone := dial(t, base)
		_, err = io.WriteString(gone, "GET /hold HTTP/1.1\r\nHost: h\r\n\r\n")
		require.NoError(t, err)
		d := <-held
		require.NoError(t, s.Close())
		testenv.Eventually(t, 20*time.Second, "the connection closes", func() bool { return s.Metrics().Connections == 0 })
		require.Error(t, d.Finish())
		require.Empty(t, readEOF(t, gone), "nothing sent for the deferred response")
	})
}

// TestDeferredStream: a deferred response streamed with Flush from another
// goroutine: the first piece reaches the client before the producer goes
// on, and 8 MiB (far more than the socket buffers and the watermarks, so
// Flush waits for the client) arrive whole and in order, chunked.
func TestDeferredStream(t *testing.T) {
	testenv.ForEachBackend(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		const pieces, size = 128, 64 << 10
		piece := func(i int) []byte { return []byte(strings.Repeat(string(rune('a'+i%26)), size)) }
		gate := make(chan struct{})
		errs := make(chan error, 1)
		s, err := httpserver.NewFast(httpserver.HandlerFunc(func(w *httpserver.Response, r *httpserver.Request) {
			if string(r.Path()) == "/next" {
				_, _ = w.WriteString("next")
				return
			}
			d := w.Defer()
			go func() {
				errs <- func() error {
					for i := range pieces {
						_, _ = d.Write(piece(i))
						if err := d.Flush(); err != nil {
							return err
						}
						if i == 0 {
							<-gate // the client has the first piece
						}
					}
					return d.Finish()
				}()
			}()
		}))
		require.NoError(t, err)
		base := onLoop(t, c, s)
		conn := dial(t, base)
		_, err = io.WriteString(conn, "GET / HTTP/1.1\r\nHost: h\r\n\r\nGET /next HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n")
		require.NoError(t, err)
		br := bufio.NewReader(conn)
		res, err := http.ReadResponse(br, nil)
		require.NoError(t, err)
		require.Equal(t, []string{"chunked"}, res.TransferEncoding)
		got := make([]byte, size)
		_, err = io.ReadFull(res.Body, got)
		require.NoError(t, err)
		require.Equal(t, piece(0), got, "the first piece before the producer went on")
		close(gate)
		for i := 1; i < pieces; i++ {
			_, err = io.ReadFull(res.Body, got)
			require.NoError(t, err)
			require.Equal(t, piece(i), got, "piece %d", i)
		}
		rest, err := io.ReadAll(res.Body)
		require.NoError(t, err)
		require.Empty(t, rest)
		require.NoError(t, <-errs)
		// The server answers the pipelined request after the deferred one.
		res, err = http.ReadResponse(br, nil)
		require.NoError(t, err)
		b, err := io.ReadAll(res.Body)
		require.NoError(t, err)
		require.Equal(t, "next", string(b))
	})
}
