package main

import (
	"time"

	"golang.org/x/sys/unix"
)

// cpuNow is the CPU time this process has used, all threads.
func cpuNow() time.Duration {
	var ru unix.Rusage
	_ = unix.Getrusage(unix.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
