package looptls_test

import (
	"crypto/tls"
	"io"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/internal/testenv"
	"github.com/ringloop/ringloop/looptls"
)

// byeRecorder is an echoing recorder that says goodbye when its loop shuts
// down.
type byeRecorder struct{ *recorder }

func (r byeRecorder) OnShutdown(c *engine.Conn) { _, _ = c.Write([]byte("bye")) }

// TestShutdownSendsCloseNotify: when the loop shuts down, an established
// connection sends what its ShutdownHandler writes, then close_notify (in
// TLS 1.2 an alert record is visible on the wire), so Go's client reads a
// clean io.EOF; OnClose gets engine.ErrShutdown. A handler without
// OnShutdown gets close_notify too.
func TestShutdownSendsCloseNotify(t *testing.T) {
	p := testenv.NewPKI(t)
	handlers := []struct {
		name string
		h    func(r *recorder) engine.Handler
		want string
	}{
		{"ShutdownHandler", func(r *recorder) engine.Handler { return byeRecorder{r} }, "bye"},
		{"plain", func(r *recorder) engine.Handler { return r }, ""},
	}
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		for _, hc := range handlers {
			t.Run(hc.name, func(t *testing.T) {
				testenv.CheckLeaks(t)
				loop, err := engine.New(c.Options()...)
				require.NoError(t, err)
				r := newRecorder()
				ln, err := engine.Listen(loop, "tcp", "127.0.0.1:0", looptls.Server(hc.h(r), serverConfig(t, p)))
				require.NoError(t, err)
				raw, err := net.Dial("tcp", ln.Addr().String())
				require.NoError(t, err)
				rc := &recordConn{Conn: raw}
				cfg := clientConfig(p)
				cfg.MaxVersion = tls.VersionTLS12
				tc := tls.Client(rc, cfg)
				defer tc.Close()
				roundTrip(t, tc, "ping") // established on both sides
				<-r.opens
				require.NoError(t, loop.Close())
				require.NoError(t, tc.SetReadDeadline(time.Now().Add(60*time.Second)))
				b, err := io.ReadAll(tc)
				require.NoError(t, err, "close_notify makes the end clean")
				require.Equal(t, hc.want, string(b))
				rc.mu.Lock()
				typs := rc.typs
				rc.mu.Unlock()
				require.Equal(t, byte(21), typs[len(typs)-1], "the last record is an alert: %v", typs)
				require.ErrorIs(t, <-r.closes, engine.ErrShutdown)
			})
		}
	})
}
