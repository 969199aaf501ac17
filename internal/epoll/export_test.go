package epoll

import (
	"time"

	"github.com/ringloop/ringloop/internal/epollcore"
)

// Pwait2Timeout (tests only, on the waiting goroutine) returns the timeout
// the last epoll_pwait2 call received; ResetPwait2Timeout clears it.
func Pwait2Timeout(d *Driver) time.Duration { return epollcore.Pwait2Timeout(d) }

func ResetPwait2Timeout(d *Driver) { epollcore.ResetPwait2Timeout(d) }

// WakeFD returns d's eventfd (see epollcore.WakeFD).
func WakeFD(d *Driver) int { return epollcore.WakeFD(d) }
