package testenv

import (
	"slices"
	"testing"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/internal/driver"
	"github.com/ringloop/ringloop/internal/drivertest"
)

// Epoll's combos skip only the profiles under which the driver does the
// same as under a newer one: on a kernel with epoll_pwait2 that leaves 5.10
// (epoll_wait) and native; io_uring keeps every profile.
func TestBackendProfiles(t *testing.T) {
	ps := drivertest.Profiles()
	if got := backendProfiles(engine.BackendUring); !slices.Equal(got, ps) {
		t.Errorf("io_uring profiles %v, want %v", got, ps)
	}
	native, _ := epollFeatures(driver.Native)
	old, _ := epollFeatures(driver.Kernel510)
	var want []driver.Profile
	for i, p := range ps {
		if i == len(ps)-1 || native != old && !p.AtLeast(5, 11) && ps[len(ps)-1].AtLeast(5, 11) {
			want = append(want, p)
		}
	}
	if got := backendProfiles(engine.BackendEpoll); !slices.Equal(got, want) {
		t.Errorf("epoll profiles %v, want %v (features native %q, 5.10 %q)", got, want, native, old)
	}
}

func TestDistinctProfiles(t *testing.T) {
	feats := map[driver.Profile]string{"5.10": "a", "5.15": "b", "5.19": "b", "6.1": "c", "native": "c"}
	got := distinctProfiles(driver.Profiles, func(p driver.Profile) (string, bool) {
		f, ok := feats[p]
		return f, ok && p != "5.19"
	})
	// 5.19's features cannot be read: kept.
	want := []driver.Profile{"5.10", "5.15", "5.19", "native"}
	if !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

func TestBackendsEnv(t *testing.T) {
	t.Setenv(BackendsEnv, "epoll")
	for _, c := range Combos() {
		if c.Backend != engine.BackendEpoll {
			t.Fatalf("%s=epoll: combo %s", BackendsEnv, c)
		}
	}
	t.Setenv(BackendsEnv, "kqueue")
	defer func() {
		if recover() == nil {
			t.Errorf("%s=kqueue did not panic", BackendsEnv)
		}
	}()
	Combos()
}
