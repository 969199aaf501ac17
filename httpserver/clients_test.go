package httpserver_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/httpserver"
	"github.com/ringloop/ringloop/internal/testenv"
	"github.com/ringloop/ringloop/loopgroup"
)

// variant is one way of serving the same small service.
type variant struct {
	name string
	make func() (*httpserver.Server, error)
}

var variants = []variant{
	{"fast", func() (*httpserver.Server, error) { return httpserver.NewFast(fastEcho) }},
	{"adapter", func() (*httpserver.Server, error) { return httpserver.New(stdEcho) }},
	{"inline", func() (*httpserver.Server, error) { return httpserver.New(stdEcho, httpserver.WithInlineHTTP()) }},
}

// onLoop starts s on a new loop of combo c and returns its base URL.
func onLoop(t *testing.T, c testenv.Combo, s *httpserver.Server) string {
	t.Helper()
	loop, err := engine.New(c.Options()...)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, loop.Close()) })
	a, err := s.Listen(loop, "tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.Close()) })
	return "http://" + a.String()
}

// TestHTTPClient drives every variant with Go's http.Client: keep-alive
// connections reused across requests, 16 goroutines at once, GET and POST,
// on every backend and kernel profile.
func TestHTTPClient(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		for _, v := range variants {
			t.Run(v.name, func(t *testing.T) {
				testenv.CheckLeaks(t)
				s, err := v.make()
				require.NoError(t, err)
				base := onLoop(t, c, s)
				clientRounds(t, base, 16, 20)
			})
		}
	})
}

// clientRounds runs g goroutines of n requests each through one keep-alive
// client and checks every answer and that connections were reused.
func clientRounds(t *testing.T, base string, g, n int) {
	t.Helper()
	clientRoundsOn(t, &http.Transport{MaxIdleConnsPerHost: g}, base, g, n)
}

// clientRoundsOn is clientRounds through the transport tr.
func clientRoundsOn(t *testing.T, tr *http.Transport, base string, g, n int) {
	t.Helper()
	defer tr.CloseIdleConnections()
	cl := &http.Client{Transport: tr, Timeout: 20 * time.Second}
	var reused atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, g)
	for i := range g {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range n {
				ctx := httptrace.WithClientTrace(context.Background(), &httptrace.ClientTrace{
					GotConn: func(info httptrace.GotConnInfo) {
						if info.Reused {
							reused.Add(1)
						}
					},
				})
				body := fmt.Sprintf("g%d-r%d", i, j)
				req, _ := http.NewRequestWithContext(ctx, "POST", base+"/echo?i="+strconv.Itoa(i), strings.NewReader(body))
				res, err := cl.Do(req)
				if err != nil {
					errs <- err
					return
				}
				b, err := io.ReadAll(res.Body)
				res.Body.Close()
				if err != nil || res.StatusCode != 200 || !strings.Contains(string(b), fmt.Sprintf("body=%q", body)) {
					errs <- fmt.Errorf("status %d err %v body %q", res.StatusCode, err, b)
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
	require.Greater(t, reused.Load(), int64(g*n/2), "keep-alive connections reused")
}

// TestReactorModels serves over loopgroup's three reactor models.
func TestReactorModels(t *testing.T) {
	testenv.ForEachBackend(t, func(t *testing.T, c testenv.Combo) {
		models := map[string]func(g, boss *loopgroup.Group) []loopgroup.ServerOption{
			"main-sub": func(g, boss *loopgroup.Group) []loopgroup.ServerOption {
				return []loopgroup.ServerOption{loopgroup.WithBoss(boss)}
			},
			"single": func(g, boss *loopgroup.Group) []loopgroup.ServerOption { return nil },
			"reuseport": func(g, boss *loopgroup.Group) []loopgroup.ServerOption {
				return []loopgroup.ServerOption{loopgroup.WithListenerPerLoop()}
			},
		}
		for name, opts := range models {
			t.Run(name, func(t *testing.T) {
				testenv.CheckLeaks(t)
				n := 2
				if name == "single" {
					n = 1
				}
				g, err := loopgroup.New(loopgroup.WithLoops(n), loopgroup.WithEngineOptions(c.Options()...))
				require.NoError(t, err)
				defer func() { require.NoError(t, g.Close()) }()
				boss, err := loopgroup.New(loopgroup.WithLoops(1), loopgroup.WithEngineOptions(c.Options()...))
				require.NoError(t, err)
				defer func() { require.NoError(t, boss.Close()) }()
				for _, v := range variants {
					s, err := v.make()
					require.NoError(t, err)
					a, err := s.Listen(g, "tcp", "127.0.0.1:0", opts(g, boss)...)
					require.NoError(t, err)
					clientRounds(t, "http://"+a.String(), 8, 10)
					ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
					require.NoError(t, s.Shutdown(ctx))
					cancel()
				}
			})
		}
	})
}

// tool finds a command-line client that make deps installs.
func tool(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	require.NoError(t, err, "%s not found: run make deps", name)
	return p
}

// TestCurl: curl fetches, posts, streams and sends 100-continue bodies, on
// each backend.
func TestCurl(t *testing.T) {
	curl := tool(t, "curl")
	testenv.ForEachBackend(t, func(t *testing.T, c testenv.Combo) {
		for _, v := range variants {
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
				// two requests on one connection
				out := run("-v", base+"/a", base+"/b")
				require.Contains(t, out, "uri=/a")
				require.Contains(t, out, "uri=/b")
				require.Contains(t, out, "Re-using existing connection")
				// POST with Expect: 100-continue (curl sends it for bodies over 1 MiB... force it)
				body := strings.Repeat("x", 3000)
				out = run("-H", "Expect: 100-continue", "--data-binary", body, base+"/post")
				require.Contains(t, out, fmt.Sprintf("cl=%d", len(body)))
				// chunked upload
				out = run("-H", "Transfer-Encoding: chunked", "--data-binary", "chunky", base+"/up")
				require.Contains(t, out, "cl=-1")
				require.Contains(t, out, `body="chunky"`)
				// streamed (chunked) response
				out = run(base + "/stream?n=5")
				require.Equal(t, 5000, len(out))
				// HTTP/1.0
				out = run("-0", base+"/old")
				require.Contains(t, out, "proto=HTTP/1.0")
				// HEAD
				out = run("-I", base+"/")
				require.Contains(t, out, "HTTP/1.1 200 OK")
			})
		}
	})
}

// TestWrk loads every variant with wrk (50 connections, keep-alive) on each
// backend and checks there were no errors and no non-2xx answers. The runs
// overlap: each lasts a second whatever the load.
func TestWrk(t *testing.T) {
	wrk := tool(t, "wrk")
	testenv.ForEachBackendParallel(t, func(t *testing.T, c testenv.Combo) {
		for _, v := range variants {
			t.Run(v.name, func(t *testing.T) {
				t.Parallel()
				s, err := v.make()
				require.NoError(t, err)
				base := onLoop(t, c, s)
				// A loaded or emulated machine may not finish a request in
				// the first second (50 connects, then the first answers):
				// a run that completed none is run again, longer.
				for d := 1; ; d *= 2 {
					out, err := exec.Command(wrk, "-t1", "-c50", fmt.Sprintf("-d%ds", d), "--timeout", "10s", base+"/").CombinedOutput()
					require.NoError(t, err, "%s", out)
					if wrkRequests(t, string(out)) > 0 || d >= 16 {
						checkWrk(t, string(out))
						break
					}
				}
			})
		}
	})
}

var wrkReqs = regexp.MustCompile(`(\d+) requests in`)

func checkWrk(t *testing.T, out string) {
	t.Helper()
	require.NotContains(t, out, "Non-2xx", out)
	require.NotContains(t, out, "Socket errors", out)
	require.Positive(t, wrkRequests(t, out), out)
}

// wrkRequests is how many requests wrk's summary says completed.
func wrkRequests(t *testing.T, out string) int {
	t.Helper()
	m := wrkReqs.FindStringSubmatch(out)
	require.NotNil(t, m, out)
	n, _ := strconv.Atoi(m[1])
	return n
}
