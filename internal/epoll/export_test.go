package epoll

import "time"

// Pwait2Timeout (tests, on the waiting goroutine) returns the timeout d's
// last epoll_pwait2 call received; ResetPwait2Timeout clears it.
func Pwait2Timeout(d *Driver) time.Duration { return time.Duration(d.ts.Nano()) }

func ResetPwait2Timeout(d *Driver) { d.ts.Sec, d.ts.Nsec = 0, 0 }

// WakeFD returns d's eventfd, whose count (in /proc/self/fdinfo) says how
// many Wakes wrote it: the eventfd is never read.
func WakeFD(d *Driver) int { return d.efd }
