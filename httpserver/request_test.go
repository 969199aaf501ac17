package httpserver_test

import (
	"bufio"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ringloop/ringloop/httpserver"
)

// TestRequestViewAllocs: reading a request through the fast API's view
// allocates nothing (common methods come back as constants).
func TestRequestViewAllocs(t *testing.T) {
	raw := []byte("POST http://example.com/p/q?x=1 HTTP/1.1\r\nHost: h\r\nX-A: 1\r\nContent-Length: 3\r\n\r\nabc")
	r := httpserver.ViewOf(t, raw)
	require.Equal(t, "POST", r.Method())
	require.Equal(t, "/p/q", string(r.Path()))
	require.Equal(t, "x=1", string(r.Query()))
	require.Equal(t, "example.com", string(r.Host()))
	require.Equal(t, "1", string(r.Header("x-a")))
	require.Equal(t, "abc", string(r.Body()))
	require.Equal(t, "HTTP/1.1", r.Proto())
	n := testing.AllocsPerRun(100, func() {
		_ = r.Method()
		_ = r.Path()
		_ = r.Query()
		_ = r.Host()
		_ = r.Header("Content-Length")
		_ = r.Body()
		_ = r.Proto()
		_ = r.KeepAlive()
	})
	require.Zero(t, n)
}

// TestChunkFramingBounded: a chunked body whose framing (here long chunk
// extensions on one-byte chunks) outgrows its data by more than net/http
// allows is refused, as net/http refuses it, so its raw bytes cannot pile
// up while the decoded body stays small.
func TestChunkFramingBounded(t *testing.T) {
	body := func(chunks int) string {
		var b strings.Builder
		b.WriteString("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n")
		for range chunks {
			b.WriteString("1;" + strings.Repeat("e", 100) + "\r\nX\r\n")
		}
		b.WriteString("0\r\n\r\n")
		return b.String()
	}
	for _, tc := range []struct {
		chunks int
		ok     bool
	}{{100, true}, {300, false}} {
		raw := body(tc.chunks)
		_, status, done := httpserver.ParseFirstLimits([]byte(raw), len(raw), 1<<20)
		require.True(t, done)
		req, err := http.ReadRequest(bufio.NewReader(strings.NewReader(raw)))
		require.NoError(t, err)
		_, err = io.ReadAll(req.Body)
		if tc.ok {
			require.Zero(t, status, "%d chunks", tc.chunks)
			require.NoError(t, err, "%d chunks: net/http", tc.chunks)
		} else {
			require.Equal(t, http.StatusBadRequest, status, "%d chunks", tc.chunks)
			require.Error(t, err, "%d chunks: net/http", tc.chunks)
		}
	}
}
