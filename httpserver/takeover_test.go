package httpserver_test

import (
	"bufio"
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/httpserver"
	"github.com/ringloop/ringloop/internal/testenv"
)

// byteEcho is a protocol after an upgrade: every byte back, on the loop.
type byteEcho struct{ closed chan error }

func (e byteEcho) OnOpen(*engine.Conn)               {}
func (e byteEcho) OnData(c *engine.Conn, b []byte)   { _, _ = c.Write(b) }
func (e byteEcho) OnClose(_ *engine.Conn, err error) { e.closed <- err }

// TestUpgradeFromHandler: an http.Handler served by the adapter hands its
// connection to a loop handler with Upgrade, over HTTP and HTTPS, on a
// goroutine and inline: the 101 carries the handler's header fields but
// not Content-Length, bytes the client sent right behind the request come
// first, the connection is the new handler's (echoed, in plaintext over
// TLS) and Shutdown does not wait for it. A second call is an error.
func TestUpgradeFromHandler(t *testing.T) {
	p := testenv.NewPKI(t)
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		loop, err := engine.New(c.Options()...)
		require.NoError(t, err)
		t.Cleanup(func() { require.NoError(t, loop.Close()) })
		for _, mode := range []struct {
			name           string
			useTLS, inline bool
		}{{"http", false, false}, {"http-inline", false, true}, {"https", true, false}, {"https-inline", true, true}} {
			t.Run(mode.name, func(t *testing.T) {
				echo := byteEcho{closed: make(chan error, 1)}
				errs := make(chan error, 4)
				h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					w.Header().Set("X-Proto", "echo")
					w.Header().Set("Content-Length", "12")
					errs <- httpserver.Upgrade(w, "echo", echo)
					errs <- httpserver.Upgrade(w, "echo", echo)
					_, err := w.Write([]byte("after"))
					errs <- err
				})
				opts := []httpserver.Option{}
				if mode.inline {
					opts = append(opts, httpserver.WithInlineHTTP())
				}
				if mode.useTLS {
					opts = append(opts, httpserver.WithTLSConfig(serverTLS(t, p)))
				}
				s, err := httpserver.New(h, opts...)
				require.NoError(t, err)
				var a net.Addr
				if mode.useTLS {
					a, err = s.ListenTLS(loop, "tcp", "127.0.0.1:0", "", "")
				} else {
					a, err = s.Listen(loop, "tcp", "127.0.0.1:0")
				}
				require.NoError(t, err)
				conn, err := net.DialTimeout("tcp", a.String(), 10*time.Second)
				require.NoError(t, err)
				defer conn.Close()
				if mode.useTLS {
					tc := tls.Client(conn, clientTLS(p))
					conn = tc
				}
				_ = conn.SetDeadline(time.Now().Add(60 * time.Second))
				_, err = io.WriteString(conn, "GET /x HTTP/1.1\r\nHost: h\r\nConnection: Upgrade\r\nUpgrade: echo\r\n\r\nright behind")
				require.NoError(t, err)
				r := bufio.NewReader(conn)
				resp, err := http.ReadResponse(r, nil)
				require.NoError(t, err)
				require.Equal(t, http.StatusSwitchingProtocols, resp.StatusCode)
				require.Equal(t, "echo", resp.Header.Get("Upgrade"))
				require.Equal(t, "Upgrade", resp.Header.Get("Connection"))
				require.Equal(t, "echo", resp.Header.Get("X-Proto"))
				require.Empty(t, resp.Header.Values("Content-Length"))
				require.NoError(t, <-errs)
				require.ErrorIs(t, <-errs, http.ErrHijacked)
				require.ErrorIs(t, <-errs, http.ErrHijacked)

				got := make([]byte, len("right behind"))
				_, err = io.ReadFull(r, got)
				require.NoError(t, err)
				require.Equal(t, "right behind", string(got))
				_, err = io.WriteString(conn, "and more")
				require.NoError(t, err)
				got = got[:len("and more")]
				_, err = io.ReadFull(r, got)
				require.NoError(t, err)
				require.Equal(t, "and more", string(got))

				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				require.NoError(t, s.Shutdown(ctx), "Shutdown waited for an upgraded connection")
				conn.Close()
				select {
				case <-echo.closed:
				case <-time.After(30 * time.Second):
					t.Fatal("the upgraded connection's OnClose did not run")
				}
			})
		}
	})
}

// TestUpgradeNotAdapter: a writer that is not the adapter's is refused
// with ErrNotAdapter, and so are bad arguments.
func TestUpgradeNotAdapter(t *testing.T) {
	rec := httptest.NewRecorder()
	require.ErrorIs(t, httpserver.Upgrade(rec, "echo", byteEcho{}), httpserver.ErrNotAdapter)
	require.ErrorIs(t, httpserver.CanUpgrade(rec), httpserver.ErrNotAdapter)
	require.Error(t, httpserver.Upgrade(rec, "echo", nil))
	require.Error(t, httpserver.Upgrade(rec, "bad\r\nline", byteEcho{}))
}
