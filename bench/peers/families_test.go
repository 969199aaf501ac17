package peers

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ringloop/ringloop/engine"
)

// Every ringloop family has one peer per backend, named PREFIX-uring and
// PREFIX-epoll, each in every threading mode and forcing the backend it
// names; and no other peer claims a family.
func TestFamilies(t *testing.T) {
	prefixes := map[string]string{FamilyEcho: "ringloop", FamilyHTTP: "ringloop-http", FamilyAdapter: "ringloop-http-adapter",
		FamilyNetHTTP: "net/http-on-ringloop", FamilyTLS: "netconn+tls", FamilyLoopTLS: "looptls",
		FamilyWebSocket: "ringloop-ws", FamilyUDP: "ringloop-udp", FamilyDNS: "ringloop-dns"}
	require.Len(t, prefixes, len(Families))
	count := map[string]int{}
	for _, p := range All("") {
		if p.Family == "" {
			require.Empty(t, p.Backend, p.Name)
			continue
		}
		count[p.Family]++
		require.Contains(t, Families, p.Family)
		require.NotNil(t, p.Modes, p.Name)
		require.Equal(t, RingloopModes(), p.Modes())
		switch p.Name {
		case prefixes[p.Family] + "-uring":
			require.Equal(t, "io_uring", p.Backend)
			require.True(t, p.NeedsURing)
		case prefixes[p.Family] + "-epoll":
			require.Equal(t, "epoll", p.Backend)
			require.False(t, p.NeedsURing)
		default:
			t.Fatalf("%s: not named after its family %q", p.Name, p.Family)
		}
	}
	for _, f := range Families {
		require.Equal(t, 2, count[f], f)
	}
}

// Automatic reports the loop engine.New builds without options.
func TestAutomatic(t *testing.T) {
	t.Setenv(ThreadingEnv, "")
	t.Setenv("RINGLOOP_BACKEND", "")
	t.Setenv("RINGLOOP_KERNEL_PROFILE", "")
	info, err := Automatic()
	require.NoError(t, err)
	var b engine.Backend
	require.NoError(t, b.UnmarshalText([]byte(info.Backend)))
	require.Equal(t, DefaultThreading(b), info.Threading)
	require.NotEmpty(t, info.Detail, "why this backend")
}
