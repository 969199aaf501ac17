package testenv

import (
	"slices"
	"sync"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/internal/driver"
	"github.com/ringloop/ringloop/internal/drivertest"
	"github.com/ringloop/ringloop/internal/epoll"
)

// backendProfiles returns the kernel profiles b's combos run under.
//
// io_uring runs under every profile (drivertest.Profiles): each masks
// features it uses. The epoll driver uses a profile for one choice only,
// epoll_pwait2 (5.11), so under 5.15, 5.19 and 6.1 it is the very driver
// it is under native, and those combos ran the same code again (six of the
// ten epoll combos, about a fifth of every integration suite's time). Which
// profiles epoll tells apart is not written down here but asked of the
// driver: a profile is kept when the features the driver reports under it
// (the profile's name aside) differ from those of every newer profile kept,
// so a new profile-dependent choice in the driver brings its combos back.
func backendProfiles(b engine.Backend) []driver.Profile {
	ps := drivertest.Profiles()
	if b != engine.BackendEpoll {
		return ps
	}
	epollOnce.Do(func() { epollProfiles = distinctProfiles(ps, epollFeatures) })
	return epollProfiles
}

var (
	epollOnce     sync.Once
	epollProfiles []driver.Profile
)

// distinctProfiles keeps, newest first, each profile whose features differ
// from those of the profiles already kept, and returns them in ps's order.
// A profile whose features cannot be read is kept.
func distinctProfiles(ps []driver.Profile, features func(driver.Profile) (string, bool)) []driver.Profile {
	var kept []driver.Profile
	var seen []string
	for i := len(ps) - 1; i >= 0; i-- {
		f, ok := features(ps[i])
		if ok && slices.Contains(seen, f) {
			continue
		}
		kept = append(kept, ps[i])
		if ok {
			seen = append(seen, f)
		}
	}
	slices.Reverse(kept)
	return kept
}

// epollFeatures is what the epoll driver does under profile p.
func epollFeatures(p driver.Profile) (string, bool) {
	d, err := epoll.New(driver.Config{Profile: p})
	if err != nil {
		return "", false
	}
	defer d.Close()
	f := d.Features()
	f.Profile = ""
	return f.String(), true
}
