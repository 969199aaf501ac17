package peers

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// A ringloop peer runs in the mode asked for (flag, else RINGLOOP_THREADING)
// and reports the mode its loop is in.
func TestRingloopThreadingModes(t *testing.T) {
	require.ElementsMatch(t, []string{"parked", "locked"}, RingloopModes())
	p, err := Lookup("ringloop-epoll")
	require.NoError(t, err)
	for _, tc := range []struct{ flag, env, want string }{
		{"parked", "", "parked"},
		{"locked", "", "locked"},
		{"", "parked", "parked"},
		{"locked", "parked", "locked"}, // the flag wins
		{"", "", "parked"},             // epoll's default
	} {
		t.Setenv(ThreadingEnv, tc.env)
		srv, err := p.Start(Config{Addr: "127.0.0.1:0", Threading: tc.flag})
		require.NoError(t, err, "%+v", tc)
		require.Equal(t, tc.want, srv.Info().Threading, "%+v", tc)
		require.NoError(t, srv.Close())
	}
	_, err = p.Start(Config{Addr: "127.0.0.1:0", Threading: "spinning"})
	require.Error(t, err)
	t.Setenv(ThreadingEnv, "spinning")
	_, err = p.Start(Config{Addr: "127.0.0.1:0"})
	require.ErrorContains(t, err, ThreadingEnv)
}
