package httpserver_test

import (
	"context"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/httpserver"
	"github.com/ringloop/ringloop/internal/testenv"
)

// TestHandlerSeesLoopShutdown: an http.Handler still running when its loop
// shuts down sees its request's context cancelled with a cause that is
// engine.ErrShutdown, as an engine.Handler's OnClose does.
func TestHandlerSeesLoopShutdown(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		started := make(chan struct{}, 1)
		cause := make(chan error, 1)
		s, err := httpserver.New(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			started <- struct{}{}
			<-r.Context().Done()
			cause <- context.Cause(r.Context())
		}))
		require.NoError(t, err)
		loop, err := engine.New(c.Options()...)
		require.NoError(t, err)
		a, err := s.Listen(loop, "tcp", "127.0.0.1:0")
		require.NoError(t, err)
		conn := dial(t, "http://"+a.String())
		_, err = io.WriteString(conn, "GET / HTTP/1.1\r\nHost: h\r\n\r\n")
		require.NoError(t, err)
		select {
		case <-started:
		case <-time.After(10 * time.Second):
			t.Fatal("the handler did not start")
		}
		require.NoError(t, loop.Close())
		select {
		case err := <-cause:
			require.ErrorIs(t, err, engine.ErrShutdown)
		case <-time.After(10 * time.Second):
			t.Fatal("the handler's context was not cancelled by the loop's shutdown")
		}
		_ = s.Close() // its loop is gone already
	})
}
