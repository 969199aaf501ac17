package websocket

import (
	"crypto/tls"
	"errors"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/httpserver"
	"github.com/ringloop/ringloop/looptls"
)

// TestDefaults: the handshake default is the HTTP server's read-header
// default and looptls's handshake default, so every path cuts a stalled
// client alike; the others are what the options' docs state.
func TestDefaults(t *testing.T) {
	require.Equal(t, httpserver.DefaultReadHeaderTimeout, defaults.handshakeTimeout)
	require.Equal(t, looptls.DefaultHandshakeTimeout, defaults.handshakeTimeout)
	require.Equal(t, 5*time.Second, defaults.closeTimeout)
	require.Zero(t, defaults.pingInterval)
	require.EqualValues(t, 16<<20, defaults.maxMessage)
}

// TestWithTimeouts: a zero field keeps its value, a negative one is an
// error, and Handshake alone is refused by the upgrades (their HTTP server
// bounds the request head).
func TestWithTimeouts(t *testing.T) {
	cfg, err := newConfig([]Option{
		WithTimeouts(Timeouts{Ping: time.Minute}),
		WithTimeouts(Timeouts{Close: time.Second}),
	}, "Upgrade", siteUpgrade)
	require.NoError(t, err)
	require.Equal(t, time.Minute, cfg.pingInterval)
	require.Equal(t, time.Second, cfg.closeTimeout)
	require.Equal(t, defaults.handshakeTimeout, cfg.handshakeTimeout)

	_, err = newConfig([]Option{WithTimeouts(Timeouts{Handshake: time.Second})}, "Upgrade", siteUpgrade)
	require.ErrorContains(t, err, "Upgrade does not take Timeouts.Handshake")
	for _, s := range []site{siteDial, siteListener} {
		cfg, err := newConfig([]Option{WithTimeouts(Timeouts{Handshake: time.Second})}, "x", s)
		require.NoError(t, err)
		require.Equal(t, time.Second, cfg.handshakeTimeout)
	}
	_, err = newConfig([]Option{WithTimeouts(Timeouts{Close: -1})}, "Dial", siteDial)
	require.ErrorContains(t, err, "expected >= 0")
}

// TestTimeoutErrors: each timeout's error matches ErrTimeout and
// os.ErrDeadlineExceeded, says a net.Error's Timeout, and names its bound.
func TestTimeoutErrors(t *testing.T) {
	for _, err := range []error{errHandshakeTimeout, errCloseTimeout, errPingTimeout} {
		require.ErrorIs(t, err, ErrTimeout)
		require.ErrorIs(t, err, os.ErrDeadlineExceeded)
		var te interface{ Timeout() bool }
		require.True(t, errors.As(err, &te) && te.Timeout())
		require.Contains(t, err.Error(), "Timeouts.")
	}
}

// TestWithDialConfig: a zero field keeps its value, the header is copied,
// and a field the handshake sets is refused.
func TestWithDialConfig(t *testing.T) {
	h := http.Header{"Authorization": {"Bearer x"}}
	tc := &tls.Config{ServerName: "a.example"}
	cfg, err := newConfig([]Option{
		WithDialConfig(DialConfig{Header: h, TLSConfig: tc}),
		WithDialConfig(DialConfig{ConnOptions: []engine.ConnOption{engine.WithTimeouts(engine.Timeouts{Close: time.Second})}}),
	}, "Dial", siteDial)
	require.NoError(t, err)
	require.Equal(t, h, cfg.header)
	require.Same(t, tc, cfg.tls)
	require.Len(t, cfg.connOpts, 1)
	h.Set("Authorization", "changed")
	require.Equal(t, "Bearer x", cfg.header.Get("Authorization"))

	_, err = newConfig([]Option{WithDialConfig(DialConfig{Header: http.Header{"Sec-WebSocket-Key": {"k"}}})}, "Dial", siteDial)
	require.ErrorContains(t, err, "set by the handshake")
}

// TestAnyOriginMerges: "*" accepts every origin whichever WithAllowedOrigins
// call gives it.
func TestAnyOriginMerges(t *testing.T) {
	for _, opts := range [][]Option{
		{WithAllowedOrigins("*")},
		{WithAllowedOrigins("*"), WithAllowedOrigins("a.example")},
		{WithAllowedOrigins("a.example"), WithAllowedOrigins("*")},
	} {
		cfg, err := newConfig(opts, "EngineHandler", siteListener)
		require.NoError(t, err)
		require.True(t, cfg.origin.allows([]byte("https://elsewhere.example"), true, []byte("here.example")))
	}
	cfg, err := newConfig([]Option{WithAllowedOrigins("a.example")}, "EngineHandler", siteListener)
	require.NoError(t, err)
	require.False(t, cfg.origin.allows([]byte("https://elsewhere.example"), true, []byte("here.example")))
}

// TestHubLimits: a zero or negative field takes its default; the others
// are taken as given.
func TestHubLimits(t *testing.T) {
	var h Hub
	h.resolveLimits()
	require.Equal(t, hubConfig{backlog: 1024, backlogBytes: 1 << 20, slowTimeout: 5 * time.Second}, h.cfg)
	set := &Hub{BacklogMessages: -1, BacklogBytes: 10, SlowTimeout: time.Second}
	set.resolveLimits()
	require.Equal(t, hubConfig{backlog: 1024, backlogBytes: 10, slowTimeout: time.Second}, set.cfg)
}
