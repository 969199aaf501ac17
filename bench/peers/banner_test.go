package peers

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestBannerRoundTrip(t *testing.T) {
	p := Peer{Name: "ringloop-uring", Kind: Echo}
	line := Banner("127.0.0.1:4000", p, Info{Backend: "io_uring", Threading: "locked", Detail: `multishot "recv", buffer rings`})
	addr, kv, err := ParseBanner(line)
	require.NoError(t, err)
	require.Equal(t, "127.0.0.1:4000", addr)
	require.Equal(t, "ringloop-uring", kv["peer"])
	require.Equal(t, "echo", kv["kind"])
	require.Equal(t, "io_uring", kv["backend"])
	require.Equal(t, "locked", kv["threading"])
	require.Equal(t, `multishot "recv", buffer rings`, kv["detail"])
	require.NotEmpty(t, kv["gomaxprocs"])

	_, kv, err = ParseBanner(Banner("127.0.0.1:1", Peer{Name: "fasthttp", Kind: HTTP}, Info{Threading: "goroutines (worker pool)"}))
	require.NoError(t, err)
	require.Equal(t, "goroutines (worker pool)", kv["threading"])
	require.Equal(t, "", kv["backend"])
}

func TestParseBannerOfTheCServer(t *testing.T) {
	addr, kv, err := ParseBanner("listening 127.0.0.1:41495 peer=c-liburing kind=echo backend=io_uring threading=single-thread gomaxprocs=n/a setup=defer_taskrun\n")
	require.NoError(t, err)
	require.Equal(t, "127.0.0.1:41495", addr)
	require.Equal(t, "defer_taskrun", kv["setup"])
	require.Equal(t, "n/a", kv["gomaxprocs"])
}

func TestParseBannerRejects(t *testing.T) {
	for _, bad := range []string{
		"",
		"hello 127.0.0.1:1 peer=x",
		"listening 127.0.0.1:1 kind=echo",        // no peer
		"listening 127.0.0.1:1 peer=x detail=\"", // unterminated quote
		"listening 127.0.0.1:1 peer=x junk",      // no '='
	} {
		_, _, err := ParseBanner(bad)
		require.Error(t, err, bad)
	}
}

func TestRegistryOrderAndLookup(t *testing.T) {
	names := Names(Echo)
	require.Equal(t, []string{"ringloop-uring", "ringloop-epoll", "c-liburing", "net", "gnet"}, names[:5])
	for _, n := range Names("") {
		p, err := Lookup(n)
		require.NoError(t, err)
		require.Equal(t, n, p.Name)
		require.NotEmpty(t, p.Doc)
	}
	_, err := Lookup("no-such-peer")
	require.Error(t, err)
	require.Panics(t, func() { Register(Peer{Name: "net", Kind: Echo, Start: startNetEcho}) })
}
