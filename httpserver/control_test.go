package httpserver_test

// The server's own work on a loop (the http.Handler adapter's responses, the
// per-loop tick, closing connections) must not ride on the task ring a user
// bounds with engine.WithMaxPendingTasks: a full one would drop a response
// and hang the connection.

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/httpserver"
	"github.com/ringloop/ringloop/internal/testenv"
)

func boundedLoop(t *testing.T, c testenv.Combo) *engine.Loop {
	t.Helper()
	l, err := engine.New(c.Options(engine.WithMaxPendingTasks(16, nil))...)
	require.NoError(t, err)
	t.Cleanup(func() { _ = l.Close() })
	return l
}

// TestAdapterResponseWithFullTaskRing: a handler that answers while its
// loop's task ring is full still gets its response to the client.
func TestAdapterResponseWithFullTaskRing(t *testing.T) {
	testenv.ForEachBackend(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		l := boundedLoop(t, c)
		entered, proceed := make(chan struct{}, 1), make(chan struct{})
		s, err := httpserver.New(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			entered <- struct{}{}
			<-proceed
			_, _ = w.Write([]byte("answered"))
		}))
		require.NoError(t, err)
		addr, err := s.Listen(l, "tcp", "127.0.0.1:0")
		require.NoError(t, err)
		defer func() { require.NoError(t, s.Close()) }()
		conn, err := net.Dial("tcp", addr.String())
		require.NoError(t, err)
		defer conn.Close()
		_, err = conn.Write([]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"))
		require.NoError(t, err)
		<-entered
		release := testenv.FillTaskRing(t, l)
		close(proceed) // the handler answers while the ring is full
		release()
		_ = conn.SetReadDeadline(time.Now().Add(30 * time.Second))
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		require.NoError(t, err, "the response must arrive")
		defer resp.Body.Close()
		require.Equal(t, 200, resp.StatusCode)
		body := make([]byte, len("answered"))
		_, err = resp.Body.Read(body)
		if err != nil {
			require.ErrorContains(t, err, "EOF")
		}
		require.Equal(t, "answered", string(body))
	})
}

// TestTickWithFullTaskRing: the per-loop tick of a loop whose task ring was
// full when its first connection opened still closes idle connections.
func TestTickWithFullTaskRing(t *testing.T) {
	testenv.ForEachBackend(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		l := boundedLoop(t, c)
		s, err := httpserver.New(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}),
			httpserver.WithTimeouts(httpserver.Timeouts{ReadHeader: httpserver.NoTimeout, Read: httpserver.NoTimeout, Idle: 50 * time.Millisecond}))
		require.NoError(t, err)
		addr, err := s.Listen(l, "tcp", "127.0.0.1:0")
		require.NoError(t, err)
		defer func() { require.NoError(t, s.Close()) }()
		release := testenv.FillTaskRing(t, l)
		conn, err := net.Dial("tcp", addr.String())
		require.NoError(t, err)
		defer conn.Close()
		release()
		// The idle timeout closes the connection: the client reads EOF.
		_ = conn.SetReadDeadline(time.Now().Add(30 * time.Second))
		n, err := conn.Read(make([]byte, 1))
		require.Equal(t, 0, n)
		require.Error(t, err)
		require.NotErrorIs(t, err, os.ErrDeadlineExceeded, "the idle connection was never closed")
	})
}

// TestDeferredWithFullTaskRing: a deferred response finished from another
// goroutine while its loop's task ring is full is taken, and
// reaches the client.
func TestDeferredWithFullTaskRing(t *testing.T) {
	testenv.ForEachBackend(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		l := boundedLoop(t, c)
		deferred := make(chan *httpserver.Deferred, 1)
		s, err := httpserver.NewFast(httpserver.HandlerFunc(func(w *httpserver.Response, r *httpserver.Request) {
			w.SetContentLength(int64(len("later")))
			deferred <- w.Defer()
		}))
		require.NoError(t, err)
		addr, err := s.Listen(l, "tcp", "127.0.0.1:0")
		require.NoError(t, err)
		defer func() { require.NoError(t, s.Close()) }()
		conn, err := net.Dial("tcp", addr.String())
		require.NoError(t, err)
		defer conn.Close()
		_, err = conn.Write([]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"))
		require.NoError(t, err)
		d := <-deferred
		release := testenv.FillTaskRing(t, l)
		_, _ = d.WriteString("later")
		err = d.Finish()
		release()
		require.NoError(t, err, "a full task ring must not refuse the response")
		_ = conn.SetReadDeadline(time.Now().Add(30 * time.Second))
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		require.NoError(t, err, "the response must arrive")
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		require.Equal(t, "later", string(body))
	})
}
