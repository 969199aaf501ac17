package httpserver_test

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/httpserver"
	"github.com/ringloop/ringloop/internal/testenv"
)

// handlerGoroutine answers with the number of the goroutine it runs on.
var handlerGoroutine = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	var b [64]byte
	s := strings.TrimPrefix(string(b[:runtime.Stack(b[:], false)]), "goroutine ")
	_, _ = io.WriteString(w, s[:strings.IndexByte(s, ' ')])
})

// TestAdapterReusesGoroutines: the adapter's requests, one after another,
// run on one goroutine (a worker kept between requests, its stack already
// grown), not on a new one each; nothing is left once the server closes.
func TestAdapterReusesGoroutines(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		s, err := httpserver.New(handlerGoroutine)
		require.NoError(t, err)
		base := onLoop(t, c, s)
		conn := dial(t, base)
		br := bufio.NewReader(conn)
		seen := map[string]bool{}
		for i := range 20 {
			_, err := fmt.Fprintf(conn, "GET /%d HTTP/1.1\r\nHost: h\r\n\r\n", i)
			require.NoError(t, err)
			res, err := http.ReadResponse(br, nil)
			require.NoError(t, err)
			b, err := io.ReadAll(res.Body)
			require.NoError(t, err)
			res.Body.Close()
			seen[string(b)] = true
		}
		// The first response is written before its worker parks: the
		// second request may find it not idle yet and start another.
		require.LessOrEqual(t, len(seen), 2, "goroutines that ran 20 sequential requests: %v", seen)
	})
}

// TestAdapterWorkersEndWithLoop: a loop that shuts down under a server that
// is never closed leaves no worker behind.
func TestAdapterWorkersEndWithLoop(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		s, err := httpserver.New(handlerGoroutine)
		require.NoError(t, err)
		loop, err := engine.New(c.Options()...)
		require.NoError(t, err)
		a, err := s.Listen(loop, "tcp", "127.0.0.1:0")
		require.NoError(t, err)
		tr := &http.Transport{MaxIdleConnsPerHost: 8}
		defer tr.CloseIdleConnections()
		cl := &http.Client{Transport: tr, Timeout: 20 * time.Second}
		var wg sync.WaitGroup
		errs := make(chan error, 8)
		for range 8 { // several at once: several workers
			wg.Go(func() {
				for range 10 {
					res, err := cl.Get("http://" + a.String() + "/")
					if err != nil {
						errs <- err
						return
					}
					_, _ = io.Copy(io.Discard, res.Body)
					res.Body.Close()
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			require.NoError(t, err)
		}
		require.NoError(t, loop.Close())
	})
}
