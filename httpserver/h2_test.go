package httpserver_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"

	"github.com/ringloop/ringloop/httpserver"
	"github.com/ringloop/ringloop/internal/testenv"
)

// h2Variants serve the echo service with cleartext HTTP/2 on each API.
var h2Variants = []variant{
	{"fast", func() (*httpserver.Server, error) { return httpserver.NewFast(fastEcho, httpserver.WithH2C()) }},
	{"adapter", func() (*httpserver.Server, error) { return httpserver.New(stdEcho, httpserver.WithH2C()) }},
	{"inline", func() (*httpserver.Server, error) {
		return httpserver.New(stdEcho, httpserver.WithH2C(), httpserver.WithInlineHTTP())
	}},
}

// h2Client is Go's HTTP/2 client speaking cleartext HTTP/2 with prior
// knowledge to base ("http://host:port").
func h2Client(base string) (*http.Client, *http2.Transport) {
	addr := strings.TrimPrefix(base, "http://")
	tr := &http2.Transport{
		AllowHTTP: true,
		DialTLSContext: func(ctx context.Context, network, _ string, _ *tls.Config) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, network, addr)
		},
	}
	return &http.Client{Transport: tr, Timeout: 60 * time.Second}, tr
}

// TestH2Client drives every API over h2c with Go's HTTP/2 client: 16
// goroutines of 20 requests each multiplexed on one connection, and an
// HTTP/1.1 client on the same port.
func TestH2Client(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		for _, v := range h2Variants {
			t.Run(v.name, func(t *testing.T) {
				testenv.CheckLeaks(t)
				s, err := v.make()
				require.NoError(t, err)
				base := onLoop(t, c, s)
				cl, tr := h2Client(base)
				defer tr.CloseIdleConnections()
				var wg sync.WaitGroup
				errs := make(chan error, 16)
				for i := range 16 {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for j := range 20 {
							body := fmt.Sprintf("g%d-r%d", i, j)
							res, err := cl.Post(base+"/echo?i=1", "text/plain", strings.NewReader(body))
							if err != nil {
								errs <- err
								return
							}
							b, err := io.ReadAll(res.Body)
							res.Body.Close()
							if err != nil || res.StatusCode != 200 || res.ProtoMajor != 2 ||
								!strings.Contains(string(b), fmt.Sprintf("body=%q", body)) || !strings.Contains(string(b), "proto=HTTP/2.0") {
								errs <- fmt.Errorf("status %d proto %s err %v body %q", res.StatusCode, res.Proto, err, b)
								return
							}
						}
					}()
				}
				wg.Wait()
				close(errs)
				for err := range errs {
					require.NoError(t, err)
				}
				// HTTP/1.1 on the same port
				clientRounds(t, base, 2, 5)
			})
		}
	})
}

// TestH2LargeBodies sends and receives bodies many windows long on
// concurrent streams of one connection: the flow control of both sides
// is what moves them.
func TestH2LargeBodies(t *testing.T) {
	const up, down = 3 << 20, 8 << 20
	payload := bytes.Repeat([]byte("0123456789abcdef"), up/16)
	big := bytes.Repeat([]byte("z"), down)
	testenv.ForEachBackend(t, func(t *testing.T, c testenv.Combo) {
		for _, v := range []variant{
			{"fast", func() (*httpserver.Server, error) {
				return httpserver.NewFast(httpserver.HandlerFunc(func(w *httpserver.Response, r *httpserver.Request) {
					if r.Method() == "GET" {
						_, _ = w.Write(big)
						return
					}
					_, _ = fmt.Fprintf(w, "%d %x", len(r.Body()), sum(r.Body()))
				}), httpserver.WithH2C())
			}},
			{"adapter", func() (*httpserver.Server, error) {
				return httpserver.New(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if r.Method == "GET" {
						for i := 0; i < len(big); i += 100 << 10 {
							_, _ = w.Write(big[i:min(len(big), i+100<<10)])
						}
						return
					}
					b, err := io.ReadAll(r.Body)
					if err != nil {
						http.Error(w, err.Error(), 500)
						return
					}
					_, _ = fmt.Fprintf(w, "%d %x", len(b), sum(b))
				}), httpserver.WithH2C())
			}},
		} {
			t.Run(v.name, func(t *testing.T) {
				testenv.CheckLeaks(t)
				s, err := v.make()
				require.NoError(t, err)
				base := onLoop(t, c, s)
				cl, tr := h2Client(base)
				defer tr.CloseIdleConnections()
				var wg sync.WaitGroup
				errs := make(chan error, 8)
				for i := range 4 {
					wg.Add(2)
					go func() {
						defer wg.Done()
						res, err := cl.Post(base+"/up", "application/octet-stream", bytes.NewReader(payload))
						if err != nil {
							errs <- err
							return
						}
						b, _ := io.ReadAll(res.Body)
						res.Body.Close()
						if want := fmt.Sprintf("%d %x", len(payload), sum(payload)); string(b) != want {
							errs <- fmt.Errorf("upload %d: got %q want %q", i, b, want)
						}
					}()
					go func() {
						defer wg.Done()
						res, err := cl.Get(base + "/down")
						if err != nil {
							errs <- err
							return
						}
						b, err := io.ReadAll(res.Body)
						res.Body.Close()
						if err != nil || !bytes.Equal(b, big) {
							errs <- fmt.Errorf("download %d: %d bytes, err %v", i, len(b), err)
						}
					}()
				}
				wg.Wait()
				close(errs)
				for err := range errs {
					require.NoError(t, err)
				}
			})
		}
	})
}

// sum is a cheap checksum of b.
func sum(b []byte) uint32 { return crc32.ChecksumIEEE(b) }

// TestH2Trailers: trailers both ways, as gRPC uses them: the client's
// reach the adapter's r.Trailer once the body is read (and the fast API's
// Request.Trailer), the handler's declared ones and TrailerPrefix ones
// reach the client, and a response of trailers only (no DATA) is framed
// as HEADERS then trailing HEADERS.
func TestH2Trailers(t *testing.T) {
	testenv.ForEachBackend(t, func(t *testing.T, c testenv.Combo) {
		for _, v := range []variant{
			{"adapter", func() (*httpserver.Server, error) {
				return httpserver.New(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					b, err := io.ReadAll(r.Body)
					if err != nil {
						http.Error(w, err.Error(), 500)
						return
					}
					w.Header().Set("Trailer", "X-Sum, Grpc-Status")
					if r.URL.Path == "/only" {
						w.WriteHeader(200)
						w.Header().Set("Grpc-Status", "0")
						return
					}
					_, _ = fmt.Fprintf(w, "%s|%s", b, r.Trailer.Get("X-Req"))
					w.Header().Set("X-Sum", "42")
					w.Header().Set(http.TrailerPrefix+"X-Late", "late")
				}), httpserver.WithH2C())
			}},
			{"fast", func() (*httpserver.Server, error) {
				return httpserver.NewFast(httpserver.HandlerFunc(func(w *httpserver.Response, r *httpserver.Request) {
					_, _ = fmt.Fprintf(w, "%s|%s", r.Body(), r.Trailer("X-Req"))
				}), httpserver.WithH2C())
			}},
		} {
			t.Run(v.name, func(t *testing.T) {
				testenv.CheckLeaks(t)
				s, err := v.make()
				require.NoError(t, err)
				base := onLoop(t, c, s)
				cl, tr := h2Client(base)
				defer tr.CloseIdleConnections()
				req, err := http.NewRequest("POST", base+"/t", io.MultiReader(strings.NewReader("body")))
				require.NoError(t, err)
				req.Trailer = http.Header{"X-Req": {"r1"}}
				res, err := cl.Do(req)
				require.NoError(t, err)
				b, err := io.ReadAll(res.Body)
				res.Body.Close()
				require.NoError(t, err)
				require.Equal(t, "body|r1", string(b))
				if v.name == "fast" {
					return
				}
				require.Equal(t, "42", res.Trailer.Get("X-Sum"))
				require.Equal(t, "late", res.Trailer.Get("X-Late"))

				r := dialH2(t, base)
				r.request(1, "/only", true)
				status, body, trailers := r.response(1)
				require.Equal(t, "200", status)
				require.Empty(t, body)
				require.Equal(t, []hpack.HeaderField{{Name: "grpc-status", Value: "0"}}, trailers)
			})
		}
	})
}

// TestH2Shutdown: Shutdown sends GOAWAY naming the last stream served,
// lets the streams in flight finish (a stream opened after the GOAWAY is
// not served), then closes the connection and returns nil; Go's client
// sees its requests in flight answered.
func TestH2Shutdown(t *testing.T) {
	testenv.ForEachBackend(t, func(t *testing.T, c testenv.Combo) {
		for _, client := range []string{"raw", "go"} {
			t.Run(client, func(t *testing.T) {
				testenv.CheckLeaks(t)
				entered := make(chan string, 8)
				release := make(chan struct{})
				s, err := httpserver.New(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					entered <- r.URL.Path
					<-release
					_, _ = io.WriteString(w, "done "+r.URL.Path)
				}), httpserver.WithH2C())
				require.NoError(t, err)
				base := onLoop(t, c, s)
				shut := make(chan error, 1)
				shutdown := func() {
					go func() {
						ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
						defer cancel()
						shut <- s.Shutdown(ctx)
					}()
				}
				if client == "go" {
					cl, tr := h2Client(base)
					defer tr.CloseIdleConnections()
					errs := make(chan error, 3)
					for i := range 3 {
						go func() {
							res, err := cl.Get(fmt.Sprintf("%s/%d", base, i))
							if err == nil {
								var b []byte
								b, err = io.ReadAll(res.Body)
								res.Body.Close()
								if err == nil && string(b) != fmt.Sprintf("done /%d", i) {
									err = fmt.Errorf("body %q", b)
								}
							}
							errs <- err
						}()
					}
					for range 3 {
						<-entered
					}
					shutdown()
					close(release)
					for range 3 {
						require.NoError(t, <-errs)
					}
					require.NoError(t, <-shut)
					return
				}
				r := dialH2(t, base)
				r.request(1, "/a", true)
				r.request(3, "/b", true)
				<-entered
				<-entered
				shutdown()
				ga := r.goAway()
				require.NotNil(t, ga)
				require.Equal(t, http2.ErrCodeNo, ga.ErrCode)
				require.EqualValues(t, 3, ga.LastStreamID)
				r.request(5, "/late", true)
				close(release)
				for _, id := range []uint32{1, 3} {
					status, body, _ := r.response(id)
					require.Equal(t, "200", status)
					require.Contains(t, string(body), "done /")
				}
				r.closed()
				require.NoError(t, <-shut)
				require.Empty(t, entered, "a stream over GOAWAY's last one is not served")
			})
		}
	})
}

// TestH2TLS: over ListenTLS, ALPN picks h2 for a client that offers it
// (Go's, with r.TLS saying "h2") and HTTP/1.1 for one that does not, on
// the same port; a configuration that names only "http/1.1" keeps HTTP/2
// off.
func TestH2TLS(t *testing.T) {
	p := testenv.NewPKI(t)
	certFile, keyFile := p.LeafFiles(t, "localhost", "localhost", "127.0.0.1")
	testenv.ForEachBackend(t, func(t *testing.T, c testenv.Combo) {
		for _, v := range tlsVariants {
			t.Run(v.name, func(t *testing.T) {
				testenv.CheckLeaks(t)
				s, err := v.make()
				require.NoError(t, err)
				addr := onLoopTLS(t, c, s, certFile, keyFile)
				h2 := httpsTransport(p, addr, 1)
				h2.TLSClientConfig.NextProtos = nil
				h2.ForceAttemptHTTP2 = true
				defer h2.CloseIdleConnections()
				for range 3 {
					status, body := get(t, h2, "GET", "https://localhost/tls", nil)
					require.Equal(t, 200, status)
					require.Contains(t, body, "alpn=h2")
				}
				status, body := get(t, h2, "POST", "https://localhost/echo", strings.NewReader("over h2"))
				require.Equal(t, 200, status)
				require.Contains(t, body, "proto=HTTP/2.0")
				require.Contains(t, body, `body="over h2"`)
				h1 := httpsTransport(p, addr, 1)
				defer h1.CloseIdleConnections()
				_, body = get(t, h1, "GET", "https://localhost/tls", nil)
				require.Contains(t, body, "alpn=http/1.1")
			})
		}
		t.Run("http/1.1 only", func(t *testing.T) {
			testenv.CheckLeaks(t)
			s, err := httpserver.NewFast(fastTLS, httpserver.WithTLSConfig(&tls.Config{NextProtos: []string{"http/1.1"}}))
			require.NoError(t, err)
			addr := onLoopTLS(t, c, s, certFile, keyFile)
			h2 := httpsTransport(p, addr, 1)
			h2.TLSClientConfig.NextProtos = nil
			h2.ForceAttemptHTTP2 = true
			defer h2.CloseIdleConnections()
			_, body := get(t, h2, "GET", "https://localhost/tls", nil)
			require.Contains(t, body, "alpn=http/1.1")
		})
	})
}

// TestH2Curl: curl speaks HTTP/2 with prior knowledge to each API over
// h2c (a GET, a POST of 100 KiB, a streamed response, a HEAD), and by
// ALPN over TLS.
func TestH2Curl(t *testing.T) {
	curl := testenv.NeedTool(t, "curl")
	p := testenv.NewPKI(t)
	certFile, keyFile := p.LeafFiles(t, "localhost", "localhost", "127.0.0.1")
	testenv.ForEachBackend(t, func(t *testing.T, c testenv.Combo) {
		for _, v := range h2Variants {
			t.Run(v.name, func(t *testing.T) {
				testenv.CheckLeaks(t)
				s, err := v.make()
				require.NoError(t, err)
				base := onLoop(t, c, s)
				run := func(args ...string) string {
					out, err := exec.Command(curl, append([]string{"-sS", "--max-time", "20"}, args...)...).CombinedOutput()
					require.NoError(t, err, "curl %v: %s", args, out)
					return string(out)
				}
				// One URL a run: curl 7.88 (Debian 12's) fails a second
				// request on a prior-knowledge connection with "Error in the
				// HTTP2 framing layer" whatever the server (net/http's too).
				out := run("-v", "--http2-prior-knowledge", base+"/a")
				require.Contains(t, out, "uri=/a")
				require.Contains(t, out, "proto=HTTP/2.0")
				require.Contains(t, out, "< HTTP/2 200")
				body := strings.Repeat("x", 100<<10)
				out = run("--http2-prior-knowledge", "--data-binary", body, base+"/post")
				require.Contains(t, out, fmt.Sprintf("cl=%d", len(body)))
				out = run("--http2-prior-knowledge", base+"/stream?n=50")
				require.Equal(t, 50000, len(out))
				out = run("--http2-prior-knowledge", "-I", base+"/")
				require.Contains(t, out, "HTTP/2 200")
			})
		}
		t.Run("tls", func(t *testing.T) {
			testenv.CheckLeaks(t)
			s, err := httpserver.New(stdTLS)
			require.NoError(t, err)
			addr := onLoopTLS(t, c, s, certFile, keyFile)
			_, port, _ := net.SplitHostPort(addr)
			out, err := exec.Command(curl, "-sS", "--max-time", "20", "--http2", "--cacert", p.CAFile,
				"--resolve", "localhost:"+port+":127.0.0.1", "https://localhost:"+port+"/tls").CombinedOutput()
			require.NoError(t, err, "%s", out)
			require.Contains(t, string(out), "alpn=h2")
		})
	})
}

// TestH2Deferred: a fast handler that defers its response to a goroutine
// leaves the connection's other streams going: a deferred stream answered
// after a later one, with a Flush that waits for the data to leave.
func TestH2Deferred(t *testing.T) {
	testenv.ForEachBackend(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		release := make(chan struct{})
		var flushed atomic.Int64
		s, err := httpserver.NewFast(httpserver.HandlerFunc(func(w *httpserver.Response, r *httpserver.Request) {
			if string(r.Path()) != "/slow" {
				_, _ = w.WriteString("fast")
				return
			}
			d := w.Defer()
			go func() {
				<-release
				_, _ = d.WriteString(strings.Repeat("s", 100<<10))
				if d.Flush() == nil {
					flushed.Add(1)
				}
				_, _ = d.WriteString("end")
				_ = d.Finish()
			}()
		}), httpserver.WithH2C())
		require.NoError(t, err)
		base := onLoop(t, c, s)
		r := dialH2(t, base)
		r.request(1, "/slow", true)
		r.request(3, "/quick", true)
		status, body, _ := r.response(3)
		require.Equal(t, "200", status)
		require.Equal(t, "fast", string(body))
		close(release)
		status, body, _ = r.response(1)
		require.Equal(t, "200", status)
		require.Equal(t, strings.Repeat("s", 100<<10)+"end", string(body))
		require.EqualValues(t, 1, flushed.Load())
	})
}

// TestH2Panic: a handler's panic resets its stream (INTERNAL_ERROR); the
// connection's other streams are served.
func TestH2Panic(t *testing.T) {
	testenv.ForEachBackend(t, func(t *testing.T, c testenv.Combo) {
		for _, v := range []variant{
			{"fast", func() (*httpserver.Server, error) {
				return httpserver.NewFast(httpserver.HandlerFunc(func(w *httpserver.Response, r *httpserver.Request) {
					if string(r.Path()) == "/panic" {
						panic(http.ErrAbortHandler)
					}
					_, _ = w.WriteString("ok")
				}), httpserver.WithH2C())
			}},
			{"adapter", func() (*httpserver.Server, error) {
				return httpserver.New(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if r.URL.Path == "/panic" {
						panic(http.ErrAbortHandler)
					}
					_, _ = io.WriteString(w, "ok")
				}), httpserver.WithH2C())
			}},
		} {
			t.Run(v.name, func(t *testing.T) {
				testenv.CheckLeaks(t)
				s, err := v.make()
				require.NoError(t, err)
				base := onLoop(t, c, s)
				r := dialH2(t, base)
				r.request(1, "/panic", true)
				for {
					f := r.next()
					require.NotNil(t, f)
					if rst, ok := f.(*http2.RSTStreamFrame); ok {
						require.EqualValues(t, 1, rst.StreamID)
						require.Equal(t, http2.ErrCodeInternal, rst.ErrCode)
						break
					}
				}
				r.request(3, "/fine", true)
				status, body, _ := r.response(3)
				require.Equal(t, "200", status)
				require.Equal(t, "ok", string(body))
			})
		}
	})
}

// TestH2WholeBodies: bodies held whole before the fast API's handler (here
// up to 64 KiB each, 128 KiB a connection) give the connection's window
// back as they arrive, and uploads reset half-way give back what they
// held: ten reset after 50 KiB, then thirty of 60 KiB in turn (twice the
// connection's window) are all served.
func TestH2WholeBodies(t *testing.T) {
	testenv.ForEachBackend(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		s, err := httpserver.NewFast(httpserver.HandlerFunc(func(w *httpserver.Response, r *httpserver.Request) {
			_, _ = fmt.Fprintf(w, "%d", len(r.Body()))
		}), httpserver.WithH2C(), httpserver.WithLimits(httpserver.Limits{Body: 64 << 10}))
		require.NoError(t, err)
		base := onLoop(t, c, s)
		r := dialH2(t, base)
		id := uint32(1)
		for range 10 {
			r.request(id, "/cut", false)
			for range 5 {
				require.NoError(t, r.fr.WriteData(id, false, make([]byte, 10<<10)))
			}
			require.NoError(t, r.fr.WriteRSTStream(id, http2.ErrCodeCancel))
			id += 2
		}
		body := make([]byte, 60<<10)
		for range 30 {
			r.request(id, "/whole", false)
			for i := 0; i < len(body); i += 16 << 10 {
				require.NoError(t, r.fr.WriteData(id, i+16<<10 >= len(body), body[i:min(len(body), i+16<<10)]))
			}
			status, got, _ := r.response(id)
			require.Equal(t, "200", status)
			require.Equal(t, fmt.Sprint(len(body)), string(got))
			id += 2
		}
	})
}

// TestH2Limits: per stream, a declared body over the limit gets 413 before
// any handler runs (Limits.Body held whole, Limits.StreamedBody streamed),
// a streamed one growing past it fails the handler's Read with
// *http.MaxBytesError, and a stream over Limits.Headers gets 431; the
// connection serves on.
func TestH2Limits(t *testing.T) {
	testenv.ForEachBackend(t, func(t *testing.T, c testenv.Combo) {
		for _, v := range []variant{
			{"fast", func() (*httpserver.Server, error) {
				return httpserver.NewFast(fastEcho, httpserver.WithH2C(), httpserver.WithLimits(httpserver.Limits{Body: 1000, Headers: 5}))
			}},
			{"adapter", func() (*httpserver.Server, error) {
				return httpserver.New(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					b, err := io.ReadAll(r.Body)
					var mbe *http.MaxBytesError
					if errors.As(err, &mbe) {
						http.Error(w, "too big", http.StatusRequestEntityTooLarge)
						return
					}
					_, _ = fmt.Fprintf(w, "body=%q", b)
				}), httpserver.WithH2C(), httpserver.WithLimits(httpserver.Limits{StreamedBody: 1000, Headers: 5}))
			}},
		} {
			t.Run(v.name, func(t *testing.T) {
				testenv.CheckLeaks(t)
				s, err := v.make()
				require.NoError(t, err)
				base := onLoop(t, c, s)
				r := dialH2(t, base)
				r.request(1, "/declared", false, "content-length", "1001")
				status, _, _ := r.response(1)
				require.Equal(t, "413", status)
				r.request(3, "/grows", false)
				for range 3 {
					require.NoError(t, r.fr.WriteData(3, false, make([]byte, 500)))
				}
				require.NoError(t, r.fr.WriteData(3, true, nil))
				status, _, _ = r.response(3)
				require.Equal(t, "413", status)
				r.request(5, "/headers", true, "a", "1", "b", "2", "c", "3", "d", "4", "e", "5", "f", "6")
				status, _, _ = r.response(5)
				require.Equal(t, "431", status)
				r.request(7, "/fine", false)
				require.NoError(t, r.fr.WriteData(7, true, []byte("ok")))
				status, body, _ := r.response(7)
				require.Equal(t, "200", status)
				require.Contains(t, string(body), `body="ok"`)
			})
		}
	})
}

// TestH2Timeouts: a connection with no stream is closed after
// Timeouts.Idle with GOAWAY; a response not written by its write deadline
// (http.ResponseController's) resets its stream only, the handler's Write
// failing with an error wrapping os.ErrDeadlineExceeded; a streamed body
// whose client goes silent fails the handler's Read after Timeouts.Read,
// and the handler still answers.
func TestH2Timeouts(t *testing.T) {
	testenv.ForEachBackend(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		werr := make(chan error, 1)
		s, err := httpserver.New(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			switch r.URL.Path {
			case "/late":
				rc := http.NewResponseController(w)
				_ = rc.SetWriteDeadline(time.Now().Add(-time.Second))
				_, err := w.Write([]byte("too late"))
				if err == nil {
					err = rc.Flush()
				}
				werr <- err
			case "/silent":
				_, err := io.ReadAll(r.Body)
				_, _ = fmt.Fprintf(w, "read: %v", errors.Is(err, os.ErrDeadlineExceeded))
			default:
				_, _ = io.WriteString(w, "ok")
			}
		}), httpserver.WithH2C(), httpserver.WithTimeouts(httpserver.Timeouts{Idle: 300 * time.Millisecond, Read: 300 * time.Millisecond}))
		require.NoError(t, err)
		base := onLoop(t, c, s)
		r := dialH2(t, base)
		r.request(1, "/late", true)
		for {
			f := r.next()
			require.NotNil(t, f)
			if rst, ok := f.(*http2.RSTStreamFrame); ok && rst.StreamID == 1 {
				require.Equal(t, http2.ErrCodeCancel, rst.ErrCode)
				break
			}
		}
		require.ErrorIs(t, <-werr, os.ErrDeadlineExceeded)
		r.request(3, "/silent", false)
		require.NoError(t, r.fr.WriteData(3, false, []byte("some")))
		status, body, _ := r.response(3)
		require.Equal(t, "200", status)
		require.Equal(t, "read: true", string(body))
		r.request(5, "/ok", true)
		status, _, _ = r.response(5)
		require.Equal(t, "200", status)
		ga := r.goAway()
		require.NotNil(t, ga, "idle: GOAWAY")
		require.Equal(t, http2.ErrCodeNo, ga.ErrCode)
		r.closed()
	})
}

// TestH2BodyStreamer: a fast handler that streams request bodies reads an
// upload many windows long from another goroutine while the response is
// deferred, the window following its reads.
func TestH2BodyStreamer(t *testing.T) {
	testenv.ForEachBackend(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		s, err := httpserver.NewFast(streamAll(func(w *httpserver.Response, r *httpserver.Request) {
			body := r.BodyStream()
			d := w.Defer()
			go func() {
				b, err := io.ReadAll(body)
				_, _ = fmt.Fprintf(d, "%d %x %v", len(b), sum(b), err)
				_ = d.Finish()
			}()
		}), httpserver.WithH2C())
		require.NoError(t, err)
		base := onLoop(t, c, s)
		cl, tr := h2Client(base)
		defer tr.CloseIdleConnections()
		payload := bytes.Repeat([]byte("streamed"), 512<<10) // 4 MiB
		res, err := cl.Post(base+"/up", "application/octet-stream", bytes.NewReader(payload))
		require.NoError(t, err)
		b, err := io.ReadAll(res.Body)
		res.Body.Close()
		require.NoError(t, err)
		require.Equal(t, fmt.Sprintf("%d %x <nil>", len(payload), sum(payload)), string(b))
	})
}

// streamAll is a BodyStreamer that streams every request's body.
type streamAll httpserver.HandlerFunc

func (streamAll) StreamBody(*httpserver.Request) bool { return true }

func (f streamAll) ServeFast(w *httpserver.Response, r *httpserver.Request) { f(w, r) }

// TestH2TLSInadequate: a TLS 1.2 connection that negotiated h2 with a
// cipher suite RFC 9113 prohibits (CBC here, which the server's
// configuration allows for HTTP/1.1 clients) gets GOAWAY
// INADEQUATE_SECURITY, as from net/http.
func TestH2TLSInadequate(t *testing.T) {
	p := testenv.NewPKI(t)
	cbc := []uint16{tls.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA}
	testenv.ForEachBackend(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		s, err := httpserver.NewFast(fastEcho, httpserver.WithTLSConfig(&tls.Config{
			Certificates: []tls.Certificate{p.Leaf(t, "localhost", "localhost")}, MaxVersion: tls.VersionTLS12, CipherSuites: cbc}))
		require.NoError(t, err)
		addr := onLoopTLS(t, c, s, "", "")
		tc, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: p.Pool, ServerName: "localhost", NextProtos: []string{"h2"},
			MaxVersion: tls.VersionTLS12, CipherSuites: cbc})
		require.NoError(t, err)
		defer tc.Close()
		require.Equal(t, "h2", tc.ConnectionState().NegotiatedProtocol)
		require.NoError(t, tc.SetDeadline(time.Now().Add(30*time.Second)))
		_, err = io.WriteString(tc, http2.ClientPreface)
		require.NoError(t, err)
		fr := http2.NewFramer(tc, tc)
		require.NoError(t, fr.WriteSettings())
		for {
			f, err := fr.ReadFrame()
			require.NoError(t, err)
			if ga, ok := f.(*http2.GoAwayFrame); ok {
				require.Equal(t, http2.ErrCodeInadequateSecurity, ga.ErrCode)
				return
			}
		}
	})
}
