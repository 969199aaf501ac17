package drivertest

import (
	"fmt"
	"os"
	"strings"

	"github.com/ringloop/ringloop/internal/driver"
)

// ProfilesEnv, when set, lists the kernel profiles the suites run under
// (comma-separated). On a real kernel booted to be tested, "native" alone
// tests what that kernel has rather than masks of it.
const ProfilesEnv = "RINGLOOP_TEST_PROFILES"

// Profiles returns the kernel profiles the suites run under: every one in
// driver.Profiles, or those ProfilesEnv names. A bad name panics: a typo must
// not quietly test nothing.
func Profiles() []driver.Profile {
	env := os.Getenv(ProfilesEnv)
	if env == "" {
		return driver.Profiles
	}
	var ps []driver.Profile
	for _, name := range strings.Split(env, ",") {
		p, err := driver.ParseProfile(strings.TrimSpace(name))
		if err != nil {
			panic(fmt.Sprintf("drivertest: %s: %v", ProfilesEnv, err))
		}
		ps = append(ps, p)
	}
	return ps
}
