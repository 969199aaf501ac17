package httpserver_test

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ringloop/ringloop/httpserver"
	"github.com/ringloop/ringloop/internal/testenv"
)

// patternTable repeats with a period that is no power of two, so a byte
// lost, doubled or moved changes the checksum.
var patternTable = func() []byte {
	b := make([]byte, 65521)
	for i := range b {
		b[i] = byte(i*31 + i>>8)
	}
	return b
}()

// pattern is n bytes of patternTable, repeated.
type pattern struct{ n, off int64 }

func (p *pattern) Read(b []byte) (int, error) {
	if p.off >= p.n {
		return 0, io.EOF
	}
	b = b[:min(int64(len(b)), p.n-p.off)]
	n := 0
	for n < len(b) {
		n += copy(b[n:], patternTable[(p.off+int64(n))%int64(len(patternTable)):])
	}
	p.off += int64(n)
	return n, nil
}

// sumOf is what the body handlers answer for n bytes of pattern.
func sumOf(n int64) string {
	h := crc32.NewIEEE()
	_, _ = io.Copy(h, &pattern{n: n})
	return fmt.Sprintf("%d %08x", n, h.Sum32())
}

// bodyService is what both APIs serve in these tests, from a goroutine:
// /sum reads the body and answers its length and checksum, /hold waits for
// release first; a read error is answered 413 (a limit) or 400 with the
// error, and reported on errs.
type bodyService struct {
	release chan struct{}
	errs    chan error
}

func newBodyService() *bodyService {
	return &bodyService{release: make(chan struct{}), errs: make(chan error, 16)}
}

func (bsvc *bodyService) consume(path string, body io.Reader) (int, string) {
	if path == "/hold" {
		<-bsvc.release
	}
	h := crc32.NewIEEE()
	n, err := io.Copy(h, body)
	if err != nil {
		bsvc.errs <- err
		var mb *http.MaxBytesError
		if errors.As(err, &mb) {
			return http.StatusRequestEntityTooLarge, "too large"
		}
		return http.StatusBadRequest, "body: " + err.Error()
	}
	return http.StatusOK, fmt.Sprintf("%d %08x", n, h.Sum32())
}

// adapter serves bodyService with an http.Handler.
func (bsvc *bodyService) adapter() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/ignore" {
			_, _ = io.WriteString(w, "ignored")
			return
		}
		code, text := bsvc.consume(r.URL.Path, r.Body)
		w.WriteHeader(code)
		_, _ = io.WriteString(w, text)
	})
}

// fastStreamer streams the bodies of /sum, /hold, /ignore and /onloop; other
// paths get whole bodies.
type fastStreamer struct{ bsvc *bodyService }

func (f fastStreamer) StreamBody(r *httpserver.Request) bool {
	return string(r.Path()) != "/whole"
}

func (f fastStreamer) ServeFast(w *httpserver.Response, r *httpserver.Request) {
	body := r.BodyStream()
	switch path := string(r.Path()); {
	case path == "/ignore":
		_, _ = w.WriteString("ignored")
	case body == nil:
		_, _ = w.WriteString("whole " + strconv.Itoa(len(r.Body())))
	case path == "/onloop":
		_, err := body.Read(make([]byte, 1))
		w.SetStatus(http.StatusInternalServerError)
		_, _ = w.WriteString(fmt.Sprint(err))
	default:
		if r.Body() != nil {
			panic("a streamed request has a whole body")
		}
		d := w.Defer()
		go func() {
			code, text := f.bsvc.consume(path, body)
			d.SetStatus(code)
			_, _ = d.WriteString(text)
			_ = d.Finish()
		}()
	}
}

// bodyServers starts the adapter and the fast API (a BodyStreamer) on
// combo c, both serving bsvc.
func bodyServers(t *testing.T, c testenv.Combo, bsvc *bodyService, opts ...httpserver.Option) map[string]string {
	t.Helper()
	a, err := httpserver.New(bsvc.adapter(), opts...)
	require.NoError(t, err)
	f, err := httpserver.NewFast(fastStreamer{bsvc}, opts...)
	require.NoError(t, err)
	out := map[string]string{"adapter": onLoop(t, c, a), "fast": onLoop(t, c, f)}
	bodyServerOf.Store(out["adapter"], a)
	bodyServerOf.Store(out["fast"], f)
	return out
}

// rss returns the process's resident set in bytes.
func rss(t *testing.T) int64 {
	b, err := os.ReadFile("/proc/self/status")
	require.NoError(t, err)
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			require.NoError(t, err)
			return kb << 10
		}
	}
	t.Fatal("no VmRSS in /proc/self/status")
	return 0
}

// TestStreamedUpload sends 1 GiB (32 MiB with -short, 128 MiB under the
// race detector, which checks no more in a longer run) through each API's
// streamed body, with a Content-Length and chunked, from Go's http.Client:
// every byte arrives in order, and the process's resident memory grows by
// at most 16 MiB meanwhile, measured after a warm-up upload (a buffered
// body would take the whole upload).
func TestStreamedUpload(t *testing.T) {
	size := int64(1 << 30)
	if testing.Short() {
		size = 32 << 20
	} else if raceEnabled {
		size = 128 << 20
	}
	want := sumOf(size)
	testenv.ForEachBackend(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		bsvc := newBodyService()
		for name, base := range bodyServers(t, c, bsvc) {
			for _, chunked := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/chunked=%v", name, chunked), func(t *testing.T) {
					client := &http.Client{Transport: &http.Transport{}}
					defer client.CloseIdleConnections()
					upload := func(n int64) string {
						req, err := http.NewRequest("POST", base+"/sum", &pattern{n: n})
						require.NoError(t, err)
						req.ContentLength = n
						if chunked {
							req.ContentLength = -1
						}
						res, err := client.Do(req)
						require.NoError(t, err)
						got, err := io.ReadAll(res.Body)
						require.NoError(t, err)
						require.NoError(t, res.Body.Close())
						require.Equal(t, http.StatusOK, res.StatusCode, "%s", got)
						return string(got)
					}
					// A warm-up upload first: the loop's fixed receive
					// buffers (a locked io_uring loop's provided-buffer
					// ring) become resident as the kernel first fills
					// them, whatever the upload's size.
					require.Equal(t, sumOf(8<<20), upload(8<<20))
					runtime.GC()
					before := rss(t)
					var peak int64
					stop := make(chan struct{})
					var wg sync.WaitGroup
					wg.Go(func() {
						tick := time.NewTicker(5 * time.Millisecond)
						defer tick.Stop()
						for {
							peak = max(peak, rss(t))
							select {
							case <-stop:
								return
							case <-tick.C:
							}
						}
					})
					got := upload(size)
					close(stop)
					wg.Wait()
					require.Equal(t, want, got)
					growth := peak - before
					t.Logf("%d MiB uploaded; resident memory grew by %.1f MiB", size>>20, float64(growth)/(1<<20))
					require.LessOrEqual(t, growth, int64(16<<20), "resident memory grew by %d bytes", growth)
				})
			}
		}
	})
}

// TestStreamedBodyFlowControl: while a handler does not read, the server
// stops reading the connection once the body's window is full, holding no
// more than the window and one read; once the handler reads, the rest of
// the 64 MiB upload arrives whole. With -short or the race detector the
// upload is 16 MiB: still far past the window, the bound and the sockets'
// buffers, so the same stall and the same bound are checked.
func TestStreamedBodyFlowControl(t *testing.T) {
	size := int64(64 << 20)
	if testing.Short() || raceEnabled {
		size = 16 << 20
	}
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		for _, name := range []string{"adapter", "fast"} {
			t.Run(name, func(t *testing.T) {
				bsvc := newBodyService()
				a, err := httpserver.New(bsvc.adapter())
				require.NoError(t, err)
				s := a
				if name == "fast" {
					s, err = httpserver.NewFast(fastStreamer{bsvc})
					require.NoError(t, err)
				}
				base := onLoop(t, c, s)
				conn := dial(t, base)
				go func() {
					_, _ = fmt.Fprintf(conn, "POST /hold HTTP/1.1\r\nHost: h\r\nContent-Length: %d\r\n\r\n", size)
					_, _ = io.Copy(conn, &pattern{n: size})
				}()
				testenv.Eventually(t, 30*time.Second, "the server stops reading on a full window", func() bool {
					_, stalled, _ := httpserver.StreamState(s)
					return stalled
				})
				_, _, held := httpserver.StreamState(s)
				// Bytes the kernel received before the pause still arrive
				// (a locked io_uring loop's multishot receive fills ring
				// buffers ahead): the bound is the window plus those.
				t.Logf("held %d bytes while stalled", held)
				require.LessOrEqual(t, held, httpserver.BodyWindow+4<<20, "body bytes held while the handler does not read")
				close(bsvc.release)
				res, err := http.ReadResponse(bufio.NewReader(conn), nil)
				require.NoError(t, err)
				got, err := io.ReadAll(res.Body)
				require.NoError(t, err)
				require.Equal(t, sumOf(size), string(got))
			})
		}
	})
}

// TestExpectContinueOnFirstRead: "100 Continue" goes out when the handler
// first reads the body, as net/http does, not when the head arrives; a
// handler that answers without reading gets no 100 sent, and the
// connection closes after its answer (the client never sent its body).
// The combos and APIs run at once: each mostly waits to see nothing come.
func TestExpectContinueOnFirstRead(t *testing.T) {
	testenv.ForEachParallel(t, func(t *testing.T, c testenv.Combo) {
		for _, name := range []string{"adapter", "fast"} {
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				bsvc := newBodyService() // its own: release is closed once
				base := bodyServers(t, c, bsvc)[name]
				conn := dial(t, base)
				br := bufio.NewReader(conn)
				// The handler holds before reading: nothing may come yet.
				_, err := io.WriteString(conn, "POST /hold HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n")
				require.NoError(t, err)
				testenv.Eventually(t, 30*time.Second, "the request is in its handler", func() bool {
					n, _, _ := httpserver.StreamState(serverOf(t, name, base))
					return n == 1
				})
				require.NoError(t, conn.SetReadDeadline(time.Now().Add(50*time.Millisecond)))
				_, err = br.Peek(1)
				require.ErrorIs(t, err, os.ErrDeadlineExceeded, "a byte came before the handler read")
				require.NoError(t, conn.SetReadDeadline(time.Now().Add(30*time.Second)))
				close(bsvc.release)
				res, err := http.ReadResponse(br, nil)
				require.NoError(t, err)
				require.Equal(t, http.StatusContinue, res.StatusCode)
				_, err = io.WriteString(conn, "hello")
				require.NoError(t, err)
				res, err = http.ReadResponse(br, nil)
				require.NoError(t, err)
				got, err := io.ReadAll(res.Body)
				require.NoError(t, err)
				require.Equal(t, "5 "+fmt.Sprintf("%08x", crc32.ChecksumIEEE([]byte("hello"))), string(got))
				require.False(t, res.Close)

				// Answered without reading: no 100, and the connection ends.
				_, err = io.WriteString(conn, "POST /ignore HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n")
				require.NoError(t, err)
				res, err = http.ReadResponse(br, nil)
				require.NoError(t, err)
				require.Equal(t, http.StatusOK, res.StatusCode)
				require.True(t, res.Close, "kept a connection whose client still holds its body")
				got, err = io.ReadAll(res.Body)
				require.NoError(t, err)
				require.Equal(t, "ignored", string(got))
				rest, _ := io.ReadAll(br)
				require.Empty(t, rest)
			})
		}
	})
}

// servers maps a base URL back to its server, for StreamState.
var bodyServerOf sync.Map

func serverOf(t *testing.T, name, base string) *httpserver.Server {
	t.Helper()
	v, ok := bodyServerOf.Load(base)
	require.True(t, ok, "no server for %s (%s)", base, name)
	return v.(*httpserver.Server)
}

// TestStreamedBodyLimit: Limits.StreamedBody refuses a declared length
// over it with 413 before the handler, and ends a chunked body growing
// past it in *http.MaxBytesError; that connection closes after the answer.
func TestStreamedBodyLimit(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		bsvc := newBodyService()
		for name, base := range bodyServers(t, c, bsvc, httpserver.WithLimits(httpserver.Limits{StreamedBody: 1000})) {
			t.Run(name, func(t *testing.T) {
				conn := dial(t, base)
				_, err := io.WriteString(conn, "POST /sum HTTP/1.1\r\nHost: h\r\nContent-Length: 1001\r\n\r\n")
				require.NoError(t, err)
				res, err := http.ReadResponse(bufio.NewReader(conn), nil)
				require.NoError(t, err)
				require.Equal(t, http.StatusRequestEntityTooLarge, res.StatusCode)

				chunked := dial(t, base)
				go func() {
					_, _ = io.WriteString(chunked, "POST /sum HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n")
					for range 3 {
						_, _ = io.WriteString(chunked, "190\r\n"+strings.Repeat("x", 400)+"\r\n")
					}
					_, _ = io.WriteString(chunked, "0\r\n\r\n")
				}()
				br := bufio.NewReader(chunked)
				res, err = http.ReadResponse(br, nil)
				require.NoError(t, err)
				got, _ := io.ReadAll(res.Body)
				require.Equal(t, http.StatusRequestEntityTooLarge, res.StatusCode, "%s", got)
				require.True(t, res.Close)
				var mb *http.MaxBytesError
				require.ErrorAs(t, <-bsvc.errs, &mb)
				require.EqualValues(t, 1000, mb.Limit)

				// At the limit, it passes.
				conn = dial(t, base)
				_, err = io.WriteString(conn, "POST /sum HTTP/1.1\r\nHost: h\r\nContent-Length: 1000\r\n\r\n"+strings.Repeat("y", 1000))
				require.NoError(t, err)
				res, err = http.ReadResponse(bufio.NewReader(conn), nil)
				require.NoError(t, err)
				require.Equal(t, http.StatusOK, res.StatusCode)
			})
		}
	})
}

// TestUnreadBody: a body its handler never read is read and dropped after
// the response when at most 256 KiB of it remain, and the connection serves
// the next request; with more to come the connection closes after the
// response, without waiting for the body.
func TestUnreadBody(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		bsvc := newBodyService()
		for name, base := range bodyServers(t, c, bsvc) {
			t.Run(name, func(t *testing.T) {
				for _, tc := range []struct {
					what string
					head string
					body io.Reader
					keep bool
				}{
					{"100 KiB", "Content-Length: 102400", &pattern{n: 100 << 10}, true},
					{"chunked 100 KiB", "Transfer-Encoding: chunked", chunkedPattern(100<<10, 1000), true},
					{"10 MiB", "Content-Length: 10485760", &pattern{n: 10 << 20}, false},
				} {
					conn := dial(t, base)
					go func() {
						_, _ = io.WriteString(conn, "POST /ignore HTTP/1.1\r\nHost: h\r\n"+tc.head+"\r\n\r\n")
						_, _ = io.Copy(conn, tc.body)
						_, _ = io.WriteString(conn, "POST /sum HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\n\r\nabc")
					}()
					br := bufio.NewReader(conn)
					res, err := http.ReadResponse(br, nil)
					require.NoError(t, err, tc.what)
					got, err := io.ReadAll(res.Body)
					require.NoError(t, err)
					require.Equal(t, "ignored", string(got))
					if !tc.keep {
						require.True(t, res.Close, tc.what)
						continue
					}
					require.False(t, res.Close, tc.what)
					res, err = http.ReadResponse(br, nil)
					require.NoError(t, err, tc.what)
					got, err = io.ReadAll(res.Body)
					require.NoError(t, err)
					require.Equal(t, sumOfBytes([]byte("abc")), string(got), tc.what)
				}
			})
		}
	})
}

func sumOfBytes(b []byte) string { return fmt.Sprintf("%d %08x", len(b), crc32.ChecksumIEEE(b)) }

// chunkedPattern is n bytes of pattern in chunks of random sizes up to
// max, with extensions on some, and a trailer.
func chunkedPattern(n, max int) io.Reader {
	var b bytes.Buffer
	src := &pattern{n: int64(n)}
	r := rand.New(rand.NewPCG(uint64(n), uint64(max)))
	buf := make([]byte, max)
	for {
		k, _ := src.Read(buf[:1+r.IntN(max)])
		if k == 0 {
			break
		}
		if r.IntN(4) == 0 {
			fmt.Fprintf(&b, "%x;ext=%d\r\n", k, k)
		} else {
			fmt.Fprintf(&b, "%x\r\n", k)
		}
		b.Write(buf[:k])
		b.WriteString("\r\n")
	}
	b.WriteString("0\r\nX-Trailer: done\r\n\r\n")
	return &b
}

// TestStreamedPipelined: requests with bodies of both framings pipelined
// behind each other, written in pieces of random sizes (some of one
// byte), are each answered in order, byte-exact.
func TestStreamedPipelined(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		bsvc := newBodyService()
		for name, base := range bodyServers(t, c, bsvc) {
			t.Run(name, func(t *testing.T) {
				var all bytes.Buffer
				var want []string
				sizes := []int{0, 1, 1000, 70 << 10, 300 << 10, 5}
				for i, n := range sizes {
					if i%2 == 0 {
						fmt.Fprintf(&all, "POST /sum HTTP/1.1\r\nHost: h\r\nContent-Length: %d\r\n\r\n", n)
						_, _ = io.Copy(&all, &pattern{n: int64(n)})
					} else {
						all.WriteString("POST /sum HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n")
						_, _ = io.Copy(&all, chunkedPattern(n, 3000))
					}
					if n == 0 && i%2 == 0 && name == "fast" {
						want = append(want, "whole 0") // Content-Length: 0 is no body
					} else {
						want = append(want, sumOf(int64(n)))
					}
				}
				all.WriteString("GET /whole HTTP/1.1\r\nHost: h\r\n\r\n")
				conn := dial(t, base)
				go func() {
					r := rand.New(rand.NewPCG(7, 11))
					b := all.Bytes()
					for len(b) > 0 {
						k := min(len(b), 1+r.IntN(40000))
						if r.IntN(8) == 0 {
							k = 1
						}
						if _, err := conn.Write(b[:k]); err != nil {
							return
						}
						b = b[k:]
					}
				}()
				br := bufio.NewReader(conn)
				for i, w := range want {
					res, err := http.ReadResponse(br, nil)
					require.NoError(t, err, "response %d", i)
					got, err := io.ReadAll(res.Body)
					require.NoError(t, err)
					require.Equal(t, w, string(got), "response %d", i)
				}
				res, err := http.ReadResponse(br, nil)
				require.NoError(t, err)
				got, err := io.ReadAll(res.Body)
				require.NoError(t, err)
				if name == "fast" {
					require.Equal(t, "whole 0", string(got))
				} else {
					require.Equal(t, sumOf(0), string(got))
				}
			})
		}
	})
}

// TestStreamedBodyEnds: a client that closes its side in the middle of a
// body makes Read return io.ErrUnexpectedEOF; one that stops sending gets
// its connection closed after the read timeout, and Read returns
// os.ErrDeadlineExceeded; a fast handler reading its body on the loop gets
// ErrBodyReadOnLoop rather than a deadlock.
func TestStreamedBodyEnds(t *testing.T) {
	testenv.ForEachParallel(t, func(t *testing.T, c testenv.Combo) {
		bsvc := newBodyService()
		for name, base := range bodyServers(t, c, bsvc, httpserver.WithTimeouts(httpserver.Timeouts{Read: 300 * time.Millisecond})) {
			t.Run(name, func(t *testing.T) {
				conn := dial(t, base)
				_, err := io.WriteString(conn, "POST /sum HTTP/1.1\r\nHost: h\r\nContent-Length: 100\r\n\r\nonly this")
				require.NoError(t, err)
				require.NoError(t, conn.(*net.TCPConn).CloseWrite())
				res, err := http.ReadResponse(bufio.NewReader(conn), nil)
				require.NoError(t, err)
				got, _ := io.ReadAll(res.Body)
				require.Equal(t, http.StatusBadRequest, res.StatusCode, "%s", got)
				require.ErrorIs(t, <-bsvc.errs, io.ErrUnexpectedEOF)

				conn = dial(t, base)
				_, err = io.WriteString(conn, "POST /sum HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nthis\r\n")
				require.NoError(t, err)
				_, _ = io.ReadAll(conn) // the server closes it
				require.ErrorIs(t, <-bsvc.errs, os.ErrDeadlineExceeded)

				if name == "fast" {
					conn = dial(t, base)
					_, err = io.WriteString(conn, "POST /onloop HTTP/1.1\r\nHost: h\r\nContent-Length: 1\r\n\r\nx")
					require.NoError(t, err)
					res, err := http.ReadResponse(bufio.NewReader(conn), nil)
					require.NoError(t, err)
					got, _ := io.ReadAll(res.Body)
					require.Equal(t, httpserver.ErrBodyReadOnLoop.Error(), string(got))
				}
			})
		}
	})
}
