package tests

import (
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ringloop/ringloop/internal/driver"
	"github.com/ringloop/ringloop/internal/testenv"
)

// TestBackendInfoSummary: on every backend, profile and threading mode,
// Backend().String() is one line under 100 bytes naming the backend, the
// mode and the profile, and Details keeps the reason and every feature's.
func TestBackendInfoSummary(t *testing.T) {
	format := regexp.MustCompile(`^(io_uring|epoll) (parked|locked) \(kernel [0-9?][0-9.]*( as [0-9.]+)?(; io_uring unavailable)?; [a-zA-Z0-9_+,/ -]+\)$`)
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		l := newLoop(t, c)
		info := l.Backend()
		require.Equal(t, c.Backend, info.Name)
		require.Equal(t, c.Threading, info.Threading)
		s := info.String()
		t.Log(s)
		require.LessOrEqual(t, len(s), 100, "%q", s)
		require.Regexp(t, format, s)
		require.True(t, strings.HasPrefix(s, c.Backend.String()+" "+c.Threading.String()+" ("), "%q", s)
		if c.Profile != driver.Native {
			require.Contains(t, s, " as "+string(c.Profile)+";")
		}
		require.NotEmpty(t, info.Reason)
		d := info.Features.String()
		for _, r := range info.Features.Reasons {
			require.Contains(t, d, r)
		}
	})
}
