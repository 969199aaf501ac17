package looptls_test

import (
	"bytes"
	"crypto/tls"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/internal/testenv"
	"github.com/ringloop/ringloop/looptls"
)

// opened is what a server handler saw of a connection when it opened.
type opened struct {
	state tls.ConnectionState
	proto string
}

// recorder is a test server's handler: it echoes (or, with http,
// answers one HTTP request and closes) and reports what happened on
// channels.
type recorder struct {
	http    bool
	ackKeep bool // with http: answer "k" to a delivery that is kept
	opens   chan opened
	closes  chan error
	hsErrs  chan error
}

func newRecorder() *recorder {
	return &recorder{opens: make(chan opened, 1024), closes: make(chan error, 1024), hsErrs: make(chan error, 1024)}
}

func (r *recorder) OnOpen(c *engine.Conn) {
	st, _ := looptls.State(c)
	r.opens <- opened{st, st.NegotiatedProtocol}
}

func (r *recorder) OnData(c *engine.Conn, b []byte) {
	if !r.http {
		_, _ = c.Write(b)
		return
	}
	if !bytes.Contains(b, []byte("\r\n\r\n")) {
		if err := c.Keep(b); err != nil {
			_ = c.CloseWithError(err)
		}
		if r.ackKeep {
			_, _ = c.Write([]byte("k"))
		}
		return
	}
	_, _ = c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 6\r\nConnection: close\r\n\r\nhello\n"))
	_ = c.Close()
}

func (r *recorder) OnClose(_ *engine.Conn, err error)          { r.closes <- err }
func (r *recorder) OnHandshakeError(_ *engine.Conn, err error) { r.hsErrs <- err }

// serve listens on a loop of combo c with h over TLS and returns the
// address.
func serve(t *testing.T, c testenv.Combo, h engine.Handler, cfg *tls.Config, opts ...looptls.Option) string {
	t.Helper()
	return serveWith(t, c, h, cfg, opts)
}

// serveWith is serve with the engine connections' options.
func serveWith(t *testing.T, c testenv.Combo, h engine.Handler, cfg *tls.Config, opts []looptls.Option, copts ...engine.ConnOption) string {
	t.Helper()
	loop := newLoop(t, c)
	ln, err := engine.Listen(loop, "tcp", "127.0.0.1:0", looptls.Server(h, cfg, opts...), copts...)
	require.NoError(t, err)
	t.Cleanup(func() { _ = ln.Close() })
	return ln.Addr().String()
}

func newLoop(t *testing.T, c testenv.Combo) *engine.Loop {
	t.Helper()
	loop, err := engine.New(c.Options()...)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, loop.Close()) })
	return loop
}

// serverConfig is a server's tls.Config with one certificate for
// localhost and 127.0.0.1, offering http/1.1 by ALPN.
func serverConfig(t *testing.T, p *testenv.PKI) *tls.Config {
	return &tls.Config{
		Certificates: []tls.Certificate{p.Leaf(t, "localhost", "localhost", "127.0.0.1")},
		NextProtos:   []string{"http/1.1"},
	}
}

// clientConfig trusts p's CA.
func clientConfig(p *testenv.PKI) *tls.Config {
	return &tls.Config{RootCAs: p.Pool, ServerName: "localhost"}
}

var patternOnce sync.Once
var pattern []byte

// payload returns n bytes of a pattern that shows reordering.
func payload(n int) []byte {
	patternOnce.Do(func() {
		pattern = make([]byte, 2<<20)
		for i := range pattern {
			pattern[i] = byte(i*7 + i>>8)
		}
	})
	return pattern[:n]
}
