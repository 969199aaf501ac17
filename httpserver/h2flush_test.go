package httpserver_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/net/http2"

	"github.com/ringloop/ringloop/httpserver"
	"github.com/ringloop/ringloop/internal/testenv"
)

// TestH2FlushOneBehind: over HTTP/2 an adapter handler's Flush hands its
// chunk to the loop and goes on, and waits for it at its next chunk: with
// the client's window shut, the first Flush returns, the second waits
// until the client opens the window, and the body arrives whole and in
// order.
func TestH2FlushOneBehind(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		flushed := make(chan int, 3)
		s, err := httpserver.New(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			for i := range 3 {
				_, _ = w.Write([]byte{'a' + byte(i)})
				w.(http.Flusher).Flush()
				flushed <- i
			}
		}), httpserver.WithH2C())
		require.NoError(t, err)
		base := onLoop(t, c, s)
		r := dialH2(t, base, http2.Setting{ID: http2.SettingInitialWindowSize, Val: 0})
		r.request(1, "/", true)
		select {
		case i := <-flushed:
			require.Equal(t, 0, i)
		case <-time.After(10 * time.Second):
			t.Fatal("the first Flush waits for a window the client keeps shut")
		}
		select {
		case i := <-flushed:
			t.Fatalf("Flush %d returned while the first chunk could not leave", i)
		case <-time.After(200 * time.Millisecond):
		}
		require.NoError(t, r.fr.WriteWindowUpdate(1, 1<<20))
		status, body, _ := r.response(1)
		require.Equal(t, "200", status)
		require.Equal(t, "abc", string(body))
		require.Equal(t, 1, <-flushed)
		require.Equal(t, 2, <-flushed)
	})
}
