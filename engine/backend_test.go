package engine_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/internal/driver"
)

// summaryFormat is BackendInfo.String's shape: backend, threading mode,
// then in parentheses the kernel, the profile when not native, a fall back,
// the features.
var summaryFormat = regexp.MustCompile(`^(io_uring|epoll) (parked|locked) \(kernel [0-9?][0-9.]*( as [0-9.]+)?(; io_uring unavailable)?; [a-zA-Z0-9_+,/ -]+\)$`)

// TestBackendSummary: String is one line under 100 bytes whatever the
// features, the profile and the reason; Details keeps the reason and each
// feature's.
func TestBackendSummary(t *testing.T) {
	all := driver.Features{Backend: "io_uring", Profile: driver.Kernel510,
		SingleIssuer: true, DeferTaskrun: true, CoopTaskrun: true, ExtArg: true, NoDrop: true, FastPoll: true,
		MultishotAccept: true, MultishotRecv: true, MultishotPoll: true, BufRing: true, PolledRecv: true,
		MsgRing: true, CancelFD: true, Reasons: []string{strings.Repeat("a long reason ", 20), "recv: multishot with buffer ring"}}
	for _, tc := range []struct {
		name string
		info engine.BackendInfo
		want []string // in String
	}{
		{"io_uring, every feature, old profile",
			engine.BackendInfo{Name: engine.BackendUring, Threading: engine.ThreadingLocked, Features: all, Reason: "forced by option"},
			[]string{"io_uring locked (kernel ", " as 5.10; ", "multishot recv+accept, buf_ring, msg_ring, defer_taskrun)"}},
		{"io_uring, nothing",
			engine.BackendInfo{Name: engine.BackendUring, Threading: engine.ThreadingLocked, Features: driver.Features{Profile: driver.Native}},
			[]string{"io_uring locked (kernel ", "; single-shot ops)"}},
		{"io_uring parked: epoll+io_uring",
			engine.BackendInfo{Name: engine.BackendUring, Threading: engine.ThreadingParked,
				Features: driver.Features{Backend: driver.NameEpollURing, Profile: driver.Kernel510}},
			[]string{"io_uring parked (kernel ", " as 5.10; epoll+io_uring, batched ring I/O, epoll_wait)"}},
		{"epoll fall back",
			engine.BackendInfo{Name: engine.BackendEpoll, Threading: engine.ThreadingParked,
				Features: driver.Features{Backend: "epoll", Profile: driver.Native, EpollPwait2: true},
				Reason:   "auto: fell back to epoll: " + strings.Repeat("io_uring_setup: EPERM ", 30)},
			[]string{"epoll parked (kernel ", "; io_uring unavailable; epoll_pwait2)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := tc.info.String()
			require.LessOrEqual(t, len(s), 100, "%q", s)
			require.Regexp(t, summaryFormat, s)
			for _, w := range tc.want {
				require.Contains(t, s, w)
			}
			require.NotContains(t, s, "native", "the native profile goes without saying")
			d := tc.info.Features.String()
			for _, r := range tc.info.Features.Reasons {
				require.Contains(t, d, r)
			}
		})
	}
}

// TestBackendSpelling: one spelling, "io_uring", in and out.
func TestBackendSpelling(t *testing.T) {
	for _, b := range []engine.Backend{engine.BackendAuto, engine.BackendUring, engine.BackendEpoll} {
		var got engine.Backend
		require.NoError(t, got.UnmarshalText([]byte(b.String())))
		require.Equal(t, b, got)
		text, err := b.MarshalText()
		require.NoError(t, err)
		require.Equal(t, b.String(), string(text))
	}
	require.Equal(t, "io_uring", engine.BackendUring.String())
	var b engine.Backend
	require.ErrorContains(t, b.UnmarshalText([]byte("uring")), "want auto, io_uring or epoll")
}
