package httpserver_test

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/httpserver"
	"github.com/ringloop/ringloop/internal/testenv"
)

// stateLog records WithConnState's calls per connection.
type stateLog struct {
	mu  sync.Mutex
	seq map[*engine.Conn][]http.ConnState
}

func (l *stateLog) record(c *engine.Conn, st http.ConnState) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seq[c] = append(l.seq[c], st)
}

func (l *stateLog) all() [][]http.ConnState {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out [][]http.ConnState
	for _, s := range l.seq {
		out = append(out, append([]http.ConnState(nil), s...))
	}
	return out
}

type ctxKey string

// TestServerKnobs: net/http's server hooks on both APIs — ConnState's
// sequence for a keep-alive connection and for a hijacked one, the base
// and connection contexts under each request's context, RegisterOnShutdown
// at Shutdown, and a handler's panic reported to WithLogger.
func TestServerKnobs(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		states := &stateLog{seq: map[*engine.Conn][]http.ConnState{}}
		var logBuf bytes.Buffer
		var logMu sync.Mutex
		logger := slog.New(slog.NewTextHandler(&lockedWriter{w: &logBuf, mu: &logMu}, nil))
		base, cancelBase := context.WithCancel(context.WithValue(context.Background(), ctxKey("base"), "b"))
		defer cancelBase()
		connCtxCalls := 0
		shutdownRan := make(chan struct{})
		s, err := httpserver.New(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			switch r.URL.Path {
			case "/panic":
				panic("knob test panic")
			case "/hijack":
				conn, _, err := w.(http.Hijacker).Hijack()
				if err == nil {
					io.WriteString(conn, "HTTP/1.1 204 No Content\r\n\r\n")
					conn.Close()
				}
				return
			}
			io.WriteString(w, r.Context().Value(ctxKey("base")).(string)+r.Context().Value(ctxKey("conn")).(string))
		}),
			httpserver.WithConnState(states.record),
			httpserver.WithLogger(logger),
			httpserver.WithBaseContext(base),
			httpserver.WithConnContext(func(ctx context.Context, c *engine.Conn) context.Context {
				connCtxCalls++ // on the loop: one loop, no race
				return context.WithValue(ctx, ctxKey("conn"), "c")
			}))
		require.NoError(t, err)
		s.RegisterOnShutdown(func() { close(shutdownRan) })
		loop, err := engine.New(c.Options()...)
		require.NoError(t, err)
		defer loop.Close()
		a, err := s.Listen(loop, "tcp", "127.0.0.1:0")
		require.NoError(t, err)

		// Two requests on one keep-alive connection.
		conn, err := net.Dial("tcp", a.String())
		require.NoError(t, err)
		_ = conn.SetDeadline(time.Now().Add(60 * time.Second))
		r := bufio.NewReader(conn)
		for range 2 {
			_, err = io.WriteString(conn, "GET / HTTP/1.1\r\nHost: a\r\n\r\n")
			require.NoError(t, err)
			resp, err := http.ReadResponse(r, nil)
			require.NoError(t, err)
			body, _ := io.ReadAll(resp.Body)
			require.Equal(t, "bc", string(body))
		}
		require.NoError(t, conn.Close())
		// A hijacked connection.
		hc, err := net.Dial("tcp", a.String())
		require.NoError(t, err)
		_ = hc.SetDeadline(time.Now().Add(60 * time.Second))
		_, err = io.WriteString(hc, "GET /hijack HTTP/1.1\r\nHost: a\r\n\r\n")
		require.NoError(t, err)
		resp, err := http.ReadResponse(bufio.NewReader(hc), nil)
		require.NoError(t, err)
		require.Equal(t, http.StatusNoContent, resp.StatusCode)
		hc.Close()
		// A panicking handler.
		pc, err := net.Dial("tcp", a.String())
		require.NoError(t, err)
		_ = pc.SetDeadline(time.Now().Add(60 * time.Second))
		_, err = io.WriteString(pc, "GET /panic HTTP/1.1\r\nHost: a\r\n\r\n")
		require.NoError(t, err)
		_, _ = io.ReadAll(pc)
		pc.Close()

		want := [][]http.ConnState{
			{http.StateNew, http.StateActive, http.StateIdle, http.StateActive, http.StateIdle, http.StateClosed},
			{http.StateNew, http.StateActive, http.StateHijacked},
			{http.StateNew, http.StateActive, http.StateClosed},
		}
		testenv.Eventually(t, 30*time.Second, "three connections' states", func() bool {
			got := states.all()
			if len(got) != 3 {
				return false
			}
			for _, w := range want {
				found := false
				for _, g := range got {
					if slices.Equal(g, w) {
						found = true
					}
				}
				if !found {
					return false
				}
			}
			return true
		})
		testenv.Eventually(t, 30*time.Second, "the panic in the logger", func() bool {
			logMu.Lock()
			defer logMu.Unlock()
			return strings.Contains(logBuf.String(), "knob test panic")
		})
		require.NoError(t, s.Shutdown(context.Background()))
		select {
		case <-shutdownRan:
		case <-time.After(30 * time.Second):
			t.Fatal("RegisterOnShutdown's function did not run")
		}
		n, err := engine.Submit(loop, func() (int, error) { return connCtxCalls, nil }).Await(context.Background())
		require.NoError(t, err)
		require.Equal(t, 3, n, "ConnContext once per connection that had a request")
	})
}

type lockedWriter struct {
	w  io.Writer
	mu *sync.Mutex
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
