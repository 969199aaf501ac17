package driver

import (
	"fmt"
	"os"
)

// Profile masks the kernel's features to those of an older kernel, so the
// whole test suite can run as it would there. Native applies no mask.
type Profile string

// The kernel profiles the tests run under.
const (
	Kernel510 Profile = "5.10"
	Kernel515 Profile = "5.15"
	Kernel519 Profile = "5.19"
	Kernel61  Profile = "6.1"
	Native    Profile = "native"
)

// Profiles lists every profile, oldest first.
var Profiles = []Profile{Kernel510, Kernel515, Kernel519, Kernel61, Native}

// ProfileEnv names the environment variable that sets the default profile.
const ProfileEnv = "RINGLOOP_KERNEL_PROFILE"

// ParseProfile accepts a profile name; "" means Native.
func ParseProfile(s string) (Profile, error) {
	if s == "" {
		return Native, nil
	}
	for _, p := range Profiles {
		if string(p) == s {
			return p, nil
		}
	}
	return "", fmt.Errorf("driver: unknown kernel profile %q (want one of %v)", s, Profiles)
}

// ProfileFromEnv reads RINGLOOP_KERNEL_PROFILE.
func ProfileFromEnv() (Profile, error) { return ParseProfile(os.Getenv(ProfileEnv)) }

// AtLeast reports whether a kernel of this profile has a feature that
// appeared in major.minor. Native has everything the running kernel has.
func (p Profile) AtLeast(major, minor int) bool {
	var pm, pn int
	switch p {
	case Kernel510:
		pm, pn = 5, 10
	case Kernel515:
		pm, pn = 5, 15
	case Kernel519:
		pm, pn = 5, 19
	case Kernel61:
		pm, pn = 6, 1
	default:
		return true
	}
	return pm > major || (pm == major && pn >= minor)
}
