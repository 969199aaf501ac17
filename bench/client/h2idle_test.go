package client

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The idle holder's HTTP/2 connections negotiate h2, get their answer, and
// keep going past the connection's first 64 KiB window of answers (the
// holder gives it back); a server that offers no h2 fails them.
func TestIdleH2(t *testing.T) {
	var gets atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ProtoMajor != 2 || r.URL.Path != "/plaintext" {
			w.WriteHeader(http.StatusTeapot)
			return
		}
		gets.Add(1)
		_, _ = io.WriteString(w, "Hello, World!")
	}))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	defer srv.Close()
	addr := srv.Listener.Addr().String()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	const warm = 6000 // 6000 × 13 B of answers: more than 64 KiB
	require.NoError(t, Warm(ctx, addr, warm, ProtoH2))
	require.Equal(t, int64(warmHandshakes+warm), gets.Load(), "one GET per warm-up connection, then the exchanges")
	closeAll, err := Idle(ctx, addr, 20, ProtoH2)
	require.NoError(t, err)
	require.Equal(t, int64(warmHandshakes+warm+20), gets.Load())
	closeAll()

	h1 := httptest.NewTLSServer(http.NotFoundHandler())
	defer h1.Close()
	_, err = Idle(ctx, h1.Listener.Addr().String(), 1, ProtoH2)
	require.Error(t, err, "no h2 by ALPN")
}
