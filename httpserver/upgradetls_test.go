package httpserver_test

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/httpserver"
	"github.com/ringloop/ringloop/internal/testenv"
	"github.com/ringloop/ringloop/looptls"
)

// tlsShout is shoutProto that says whether TLS is underneath.
type tlsShout struct{ closed chan error }

func (p *tlsShout) OnOpen(c *engine.Conn) {
	if c.Value() != nil { // the server's own state stays with the server
		_, _ = c.Write([]byte("value kept\n"))
	}
	if st, ok := looptls.State(c); ok {
		_, _ = c.Write([]byte("hello " + tls.VersionName(st.Version) + "\n"))
		return
	}
	_, _ = c.Write([]byte("hello\n"))
}
func (p *tlsShout) OnData(c *engine.Conn, b []byte)   { _, _ = c.Write(bytes.ToUpper(b)) }
func (p *tlsShout) OnClose(c *engine.Conn, err error) { p.closed <- err }

// TestFastUpgradeTLS: over HTTPS, Upgrade answers 101 and hands the TLS
// connection to an engine.Handler on the loop, which sees first the
// plaintext the client sent behind the request, then later records, and
// the TLS state; the server counts the connection no more, and the
// handler's OnClose sees the client's close_notify. The new handler starts
// with no value. The same handler upgrades a plain connection.
func TestFastUpgradeTLS(t *testing.T) {
	p := testenv.NewPKI(t)
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		proto := &tlsShout{closed: make(chan error, 1)}
		h := httpserver.HandlerFunc(func(w *httpserver.Response, r *httpserver.Request) {
			w.AddHeader("X-Proto", "v1")
			if err := w.Upgrade("shout", proto); err != nil {
				w.SetStatus(http.StatusNotImplemented)
				_, _ = w.WriteString(err.Error())
			}
		})
		s, err := httpserver.NewFast(h, httpserver.WithTLSConfig(serverTLS(t, p)))
		require.NoError(t, err)
		addr := onLoopTLS(t, c, s, "", "")
		conn, err := tls.Dial("tcp", addr, clientTLS(p))
		require.NoError(t, err)
		defer conn.Close()
		require.NoError(t, conn.SetDeadline(time.Now().Add(60*time.Second)))
		_, err = io.WriteString(conn, "GET /up HTTP/1.1\r\nHost: a\r\nConnection: Upgrade\r\nUpgrade: shout\r\n\r\nearly")
		require.NoError(t, err)
		r := bufio.NewReader(conn)
		resp, err := http.ReadResponse(r, nil)
		require.NoError(t, err)
		require.Equal(t, http.StatusSwitchingProtocols, resp.StatusCode)
		require.Equal(t, "shout", resp.Header.Get("Upgrade"))
		require.Equal(t, "v1", resp.Header.Get("X-Proto"))
		want := "hello TLS 1.3\nEARLY"
		got := make([]byte, len(want))
		_, err = io.ReadFull(r, got)
		require.NoError(t, err)
		require.Equal(t, want, string(got))
		testenv.Eventually(t, 30*time.Second, "the server to let the connection go", func() bool { return s.Metrics().Connections == 0 })
		_, err = io.WriteString(conn, "later")
		require.NoError(t, err)
		got = make([]byte, 5)
		_, err = io.ReadFull(r, got)
		require.NoError(t, err)
		require.Equal(t, "LATER", string(got))
		require.NoError(t, conn.Close()) // close_notify, then FIN
		select {
		case err := <-proto.closed:
			require.ErrorIs(t, err, io.EOF)
		case <-time.After(30 * time.Second):
			t.Fatal("the upgraded protocol's OnClose did not run")
		}

		plain, err := httpserver.NewFast(h)
		require.NoError(t, err)
		pc := dial(t, onLoop(t, c, plain))
		_, err = io.WriteString(pc, "GET /up HTTP/1.1\r\nHost: a\r\nConnection: Upgrade\r\nUpgrade: shout\r\n\r\n")
		require.NoError(t, err)
		r = bufio.NewReader(pc)
		resp, err = http.ReadResponse(r, nil)
		require.NoError(t, err)
		require.Equal(t, http.StatusSwitchingProtocols, resp.StatusCode)
		line, err := r.ReadString('\n')
		require.NoError(t, err)
		require.Equal(t, "hello\n", line)
	})
}
