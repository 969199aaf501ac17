package epollfallback

import "time"

// Pwait2Timeout (tests only, on the waiting goroutine) returns the timeout
// the last epoll_pwait2 call received; ResetPwait2Timeout clears it.
func (d *Driver) Pwait2Timeout() time.Duration { return time.Duration(d.ts.Nano()) }

// ResetPwait2Timeout clears what Pwait2Timeout reports.
func (d *Driver) ResetPwait2Timeout() { d.ts.Sec, d.ts.Nsec = 0, 0 }
