package httpserver_test

import (
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
