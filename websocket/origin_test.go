package websocket_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/internal/testenv"
	"github.com/ringloop/ringloop/websocket"
)

// TestOriginPolicy: on every upgrade path, by default a handshake shaped as
// Chrome and Firefox send it is accepted from its own origin (the Host's,
// in any case) and without Origin, and refused with 403 from another host,
// another port of the same host, the opaque "null" origin of a sandboxed
// iframe, and an empty Origin. WithAllowedOrigins adds the origins it
// names (on scheme and host, or host alone) and nothing else;
// WithAllowedOrigins("*") accepts them all.
func TestOriginPolicy(t *testing.T) {
	forEachPath(t, func(t *testing.T, c testenv.Combo, path upgradePath, loop *engine.Loop, p *testenv.PKI) {
		scheme := "http://"
		if path.tls {
			scheme = "https://"
		}
		serve := func(opts ...websocket.Option) string {
			return path.serve(t, loop, p, serveArgs{h: silentEcho{}, opts: opts})
		}
		def := serve()
		listed := serve(websocket.WithAllowedOrigins("https://app.example", "tools.example:8443"))
		anyOrigin := serve(websocket.WithAllowedOrigins("*"))
		port := def[strings.LastIndexByte(def, ':'):]
		firefox := []string{"Sec-Fetch-Dest: empty", "Sec-Fetch-Mode: websocket", "Sec-Fetch-Site: same-origin"}
		cases := []struct {
			name, addr, host, origin string
			extra                    []string
			want                     int
		}{
			{"no Origin (not a browser)", def, "", "", nil, 101},
			{"Chrome same origin", def, "", "same", nil, 101},
			{"Firefox same origin", def, "", "same", firefox, 101},
			{"same origin, Host in another case", def, "LOCALHOST" + port, scheme + "localhost" + port, nil, 101},
			{"cross-origin", def, "", "http://evil.example", nil, 403},
			{"cross-origin with the Host's name", def, "", scheme + "127.0.0.1.evil.example" + port, nil, 403},
			{"same host, another port", def, "", scheme + "127.0.0.1:1", nil, 403},
			{"sandboxed iframe (null)", def, "", "null", nil, 403},
			{"empty Origin", def, "", "-", nil, 403},
			{"listed origin", listed, "", "https://app.example", nil, 101},
			{"listed origin, another case", listed, "", "HTTPS://App.Example", nil, 101},
			{"listed origin, another scheme", listed, "", "http://app.example", nil, 403},
			{"listed origin, another port", listed, "", "https://app.example:8443", nil, 403},
			{"listed host, any scheme", listed, "", "http://tools.example:8443", nil, 101},
			{"listed host, another port", listed, "", "https://tools.example", nil, 403},
			{"listed: still same origin", listed, "", "same", firefox, 101},
			{"listed: cross-origin", listed, "", "http://evil.example", nil, 403},
			{"listed: null", listed, "", "null", nil, 403},
			{"any origin: cross-origin", anyOrigin, "", "http://evil.example", nil, 101},
			{"any origin: null", anyOrigin, "", "null", nil, 101},
		}
		for _, tc := range cases {
			host := tc.host
			if host == "" {
				host = tc.addr
			}
			origin := tc.origin
			switch origin {
			case "same":
				origin = scheme + tc.addr
			case "-":
				origin = " " // an Origin line with an empty value
			}
			req := browserHandshake(host, origin, tc.extra...)
			require.Equal(t, tc.want, handshakeStatus(t, tc.addr, p, req), "%s: %q", tc.name, req)
		}
	})
}

// TestOriginOptions: the origin options are checked where given: a bad
// WithAllowedOrigins entry, two policies at once, a nil check, and an
// origin option given to Dial are errors naming the cause.
func TestOriginOptions(t *testing.T) {
	for _, tc := range []struct {
		opts []websocket.Option
		want string
	}{
		{[]websocket.Option{websocket.WithAllowedOrigins()}, "at least one origin"},
		{[]websocket.Option{websocket.WithAllowedOrigins("")}, "is empty"},
		{[]websocket.Option{websocket.WithAllowedOrigins("*", "https://a.example")}, `"*" accepts every origin; give it alone`},
		{[]websocket.Option{websocket.WithAllowedOrigins("null")}, "opaque origin"},
		{[]websocket.Option{websocket.WithAllowedOrigins("https://a.example/app")}, "no user, path or query"},
		{[]websocket.Option{websocket.WithAllowedOrigins("https://a.example, https://b.example")}, "one origin per argument"},
		{[]websocket.Option{websocket.WithAllowedOrigins("a.example/x")}, "not a host[:port]"},
		{[]websocket.Option{websocket.WithOriginCheck(func(o, h []byte) bool { return true }), websocket.WithAllowedOrigins("*")}, "WithOriginCheck and WithAllowedOrigins both given"},
		{[]websocket.Option{websocket.WithOriginCheck(nil)}, "WithOriginCheck(nil)"},
	} {
		_, err := websocket.EngineHandler(silentEcho{}, tc.opts...)
		require.ErrorContains(t, err, tc.want)
	}
	// Two lists add up, "*" among them too.
	_, err := websocket.EngineHandler(silentEcho{}, websocket.WithAllowedOrigins("https://a.example"), websocket.WithAllowedOrigins("b.example"))
	require.NoError(t, err)
	_, err = websocket.EngineHandler(silentEcho{}, websocket.WithAllowedOrigins("*"), websocket.WithAllowedOrigins("b.example"))
	require.NoError(t, err)

	loop, err := engine.New()
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, loop.Close()) })
	for _, o := range []websocket.Option{websocket.WithAllowedOrigins("*"), websocket.WithAllowedOrigins("https://a.example"),
		websocket.WithOriginCheck(func(o, h []byte) bool { return true })} {
		_, err := websocket.Dial(context.Background(), loop, "ws://127.0.0.1:1/", silentEcho{}, o)
		require.ErrorContains(t, err, "Dial does not take")
		require.ErrorContains(t, err, "server option")
	}
}

// TestOriginCheckSeesHeaders: WithOriginCheck gets the Origin's value, nil
// when there is none, and the Host.
func TestOriginCheckSeesHeaders(t *testing.T) {
	type seen struct {
		origin, host string
		none         bool
	}
	got := make(chan seen, 4)
	h, err := websocket.EngineHandler(silentEcho{}, websocket.WithOriginCheck(func(origin, host []byte) bool {
		got <- seen{string(origin), string(host), origin == nil}
		return string(origin) != "http://evil.example"
	}))
	require.NoError(t, err)
	loop, err := engine.New()
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, loop.Close()) })
	ln, err := engine.Listen(loop, "tcp", "127.0.0.1:0", h)
	require.NoError(t, err)
	t.Cleanup(func() { ln.Close() })
	addr := ln.Addr().String()
	require.Equal(t, http.StatusSwitchingProtocols, handshakeStatus(t, addr, nil, browserHandshake("h.example", "")))
	require.Equal(t, seen{"", "h.example", true}, <-got)
	require.Equal(t, http.StatusForbidden, handshakeStatus(t, addr, nil, browserHandshake("h.example", "http://evil.example")))
	require.Equal(t, seen{"http://evil.example", "h.example", false}, <-got)
}
