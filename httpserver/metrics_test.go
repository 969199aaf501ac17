package httpserver_test

import (
	"io"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ringloop/ringloop/httpserver"
	"github.com/ringloop/ringloop/internal/testenv"
)

// statusFromPath answers with the status its path names ("/404"), after
// sleeping for the milliseconds its "sleep" parameter names.
func statusFromPath(r *http.Request) (int, time.Duration) {
	code, err := strconv.Atoi(r.URL.Path[1:])
	if err != nil {
		code = 0 // the handler sets none
	}
	ms, _ := strconv.Atoi(r.URL.Query().Get("sleep"))
	return code, time.Duration(ms) * time.Millisecond
}

// TestRequestMetrics: both APIs count their responses by status class and
// time their handlers into the duration histogram, Requests being the sum
// of the buckets and of the classes; a handler that sets no status counts
// as 200; a handler that takes 30 ms lands in a bucket above 25 ms (its
// sleep is the floor, never a bound on the machine).
func TestRequestMetrics(t *testing.T) {
	testenv.ForEachBackend(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		std, err := httpserver.New(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			code, d := statusFromPath(r)
			time.Sleep(d)
			if code != 0 {
				w.WriteHeader(code)
			}
		}))
		require.NoError(t, err)
		fast, err := httpserver.NewFast(httpserver.HandlerFunc(func(w *httpserver.Response, r *httpserver.Request) {
			code, err := strconv.Atoi(string(r.Path()[1:]))
			if err == nil {
				w.SetStatus(code)
			}
		}))
		require.NoError(t, err)
		for name, s := range map[string]*httpserver.Server{"adapter": std, "fast": fast} {
			base := onLoop(t, c, s)
			paths := []string{"/", "/200", "/201", "/301", "/404", "/404", "/500", "/503", "/503"}
			for _, p := range paths {
				res, err := http.Get(base + p)
				require.NoError(t, err, name)
				_, _ = io.Copy(io.Discard, res.Body)
				res.Body.Close()
			}
			m := s.Metrics()
			require.Equal(t, [5]uint64{0, 3, 1, 2, 3}, m.Responses, name)
			require.Equal(t, uint64(len(paths)), m.Requests, name)
			var sum uint64
			for _, n := range m.Buckets {
				sum += n
			}
			require.Equal(t, m.Requests, sum, name)
			require.Positive(t, m.HandlerTime, name)
		}

		slow := mustNewAdapter(t)
		res, err := http.Get(onLoop(t, c, slow) + "/?sleep=30")
		require.NoError(t, err)
		res.Body.Close()
		m := slow.Metrics()
		require.Equal(t, uint64(1), m.Requests)
		for i, n := range m.Buckets {
			if n == 1 {
				require.True(t, i == len(m.BucketBounds) || m.BucketBounds[i] > 25*time.Millisecond,
					"a 30 ms handler in bucket %d", i)
			}
		}
		require.GreaterOrEqual(t, m.HandlerTime, 30*time.Millisecond)
	})
}

func mustNewAdapter(t *testing.T) *httpserver.Server {
	s, err := httpserver.New(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, d := statusFromPath(r)
		time.Sleep(d)
	}))
	require.NoError(t, err)
	return s
}
