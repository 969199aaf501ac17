package websocket_test

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/httpserver"
	"github.com/ringloop/ringloop/internal/testenv"
	"github.com/ringloop/ringloop/websocket"
)

// dialOnly are the client-only settings, each in a WithDialConfig that
// every server refuses.
var dialOnly = []websocket.Option{
	websocket.WithDialConfig(websocket.DialConfig{ConnOptions: []engine.ConnOption{engine.WithSocketOptions(engine.SocketOptions{Nagle: true})}}),
	websocket.WithDialConfig(websocket.DialConfig{TLSConfig: &tls.Config{}}),
	websocket.WithDialConfig(websocket.DialConfig{Header: http.Header{"Authorization": {"Bearer x"}}}),
}

// TestListenerOptionsChecked: EngineHandler refuses a Dial-only option at
// construction, naming it and why, and a nil handler or Option; it takes
// Timeouts.Handshake and every origin policy.
func TestListenerOptionsChecked(t *testing.T) {
	build := func(h websocket.Handler, opts ...websocket.Option) error {
		_, err := websocket.EngineHandler(h, opts...)
		return err
	}
	for _, o := range dialOnly {
		err := build(silentEcho{}, websocket.WithCompression(true), o)
		require.ErrorContains(t, err, "EngineHandler does not take WithDialConfig")
		require.ErrorContains(t, err, "Dial option")
	}
	require.ErrorContains(t, build(nil), "EngineHandler needs a handler")
	require.ErrorContains(t, build(silentEcho{}, nil), "nil Option")
	require.NoError(t, build(silentEcho{}, websocket.WithTimeouts(websocket.Timeouts{Handshake: time.Second, Close: time.Second, Ping: time.Minute}),
		websocket.WithAllowedOrigins("*")))
	require.NoError(t, build(silentEcho{}, websocket.WithOriginCheck(func(origin, host []byte) bool { return true })))
}

// TestDialRefusesServerOptions: Dial refuses the server's options, naming
// them, as DialAsync does.
func TestDialRefusesServerOptions(t *testing.T) {
	loop, err := engine.New()
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, loop.Close()) })
	for _, o := range []websocket.Option{websocket.WithAllowedOrigins("*"), websocket.WithAllowedOrigins("a.example")} {
		_, err := websocket.Dial(context.Background(), loop, "ws://127.0.0.1:1/", silentEcho{}, o)
		require.ErrorContains(t, err, "Dial does not take")
		_, err = websocket.DialAsync(context.Background(), loop, "ws://127.0.0.1:1/", silentEcho{}, o).Await(context.Background())
		require.ErrorContains(t, err, "server option")
	}
}

// TestUpgradeOptionsChecked: Upgrade and UpgradeFast given an option they
// do not take (Dial's, or Timeouts.Handshake, whose role the HTTP
// server's ReadHeader plays there) or a nil handler return the error and
// answer 500 with a body saying so: never a 200 on the wire. On every
// backend and mode, over HTTP and HTTPS.
func TestUpgradeOptionsChecked(t *testing.T) {
	bad := []struct {
		h    websocket.Handler
		opt  websocket.Option
		want string
	}{
		{silentEcho{}, dialOnly[0], "does not take WithDialConfig: it is a Dial option"},
		{silentEcho{}, dialOnly[1], "does not take WithDialConfig"},
		{silentEcho{}, dialOnly[2], "does not take WithDialConfig"},
		{silentEcho{}, websocket.WithTimeouts(websocket.Timeouts{Handshake: time.Second}), "does not take Timeouts.Handshake: it is for Dial and EngineHandler; behind Upgrade and UpgradeFast the HTTP server reads the request head, bounded by its Timeouts.ReadHeader"},
		{nil, websocket.WithCompression(true), "needs a handler"},
	}
	forEachPath(t, func(t *testing.T, c testenv.Combo, path upgradePath, loop *engine.Loop, p *testenv.PKI) {
		if strings.HasPrefix(path.name, "EngineHandler") {
			return // constructors: TestListenerOptionsChecked
		}
		for _, tc := range bad {
			errs := make(chan error, 1)
			addr := path.serve(t, loop, p, serveArgs{h: tc.h, opts: []websocket.Option{tc.opt}, report: func(err error) { errs <- err }})
			conn := dialPath(t, addr, p)
			_, err := io.WriteString(conn, browserHandshake(addr, ""))
			require.NoError(t, err)
			resp, err := http.ReadResponse(newReader(conn), nil)
			require.NoError(t, err)
			body, err := io.ReadAll(resp.Body)
			require.NoError(t, err)
			require.Equal(t, http.StatusInternalServerError, resp.StatusCode, "%s", body)
			require.Contains(t, string(body), "misconfigured")
			select {
			case err := <-errs:
				require.ErrorContains(t, err, tc.want)
			case <-time.After(30 * time.Second):
				t.Fatal("the upgrade call returned no error")
			}
		}
	})
}

// TestUpgradeHTTPNotAdapter: Upgrade under net/http's own server
// answers 500 and returns an error wrapping httpserver.ErrNotAdapter and
// saying what Upgrade needs: it never hijacks the connection into a
// goroutine behind the caller's back. A request that is not a handshake
// gets the same answer, so the mistake shows on any request.
func TestUpgradeHTTPNotAdapter(t *testing.T) {
	errs := make(chan error, 2)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		errs <- websocket.Upgrade(w, r, silentEcho{})
	}))
	defer srv.Close()
	addr := srv.Listener.Addr().String()
	for _, req := range []string{browserHandshake(addr, ""), "GET / HTTP/1.1\r\nHost: " + addr + "\r\n\r\n"} {
		require.Equal(t, http.StatusInternalServerError, handshakeStatus(t, addr, nil, req))
		err := <-errs
		require.ErrorIs(t, err, httpserver.ErrNotAdapter)
		require.ErrorContains(t, err, "websocket: Upgrade needs a handler served by httpserver's adapter")
		require.False(t, errors.Is(err, websocket.ErrHandshake))
	}
}
