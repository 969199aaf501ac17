package engine

import (
	"fmt"
	"os"
)

// Threading is how a loop's goroutine relates to OS threads and how it
// sleeps when idle. Both modes run all of a loop's work on one goroutine,
// serially; they differ in what the Go scheduler must do to wake it.
type Threading uint8

const (
	// ThreadingParked leaves the loop goroutine unlocked: when idle it parks
	// in Go's netpoller on its epoll fd, giving its thread and P back, and
	// whichever thread polls the network resumes it. On io_uring the loop
	// runs epoll+io_uring (BackendInfo's Features.Backend): readiness from
	// epoll, the receives and sends of ready fds as one batch of
	// MSG_DONTWAIT SQEs that complete inside the loop's own io_uring_enter.
	// The default on both backends (a loop's Backend().Threading reports
	// the mode it runs).
	ThreadingParked Threading = iota + 1
	// ThreadingLocked locks the loop goroutine to one OS thread for life
	// (Netty's model) and blocks in the kernel (io_uring_enter or
	// epoll_pwait) when idle; io_uring uses SINGLE_ISSUER|DEFER_TASKRUN
	// where the kernel has them. CPU affinity and thread-init hooks need it.
	ThreadingLocked
)

// defaultThreading is the mode a loop runs without WithThreading or
// RINGLOOP_THREADING, on both backends: every goroutine a locked loop wakes
// or is woken by costs thread hand-offs, which cost an http.Handler or a
// net.Conn beside the loop much of its throughput, while a parked loop keeps
// up with a locked one where the loop works alone (the package doc says
// which rows of make bench-compare's report decide it).
const defaultThreading = ThreadingParked

// backendOf names the Backend a driver is.
func backendOf(d interface{ Name() string }) Backend {
	if d.Name() == "epoll" {
		return BackendEpoll
	}
	return BackendUring
}

// threadingEnv names the environment variable operators use to choose the
// threading mode ("parked" or "locked") when no option does.
const threadingEnv = "RINGLOOP_THREADING"

// threadingNames spells each Threading as RINGLOOP_THREADING does; 0 is
// "default": ThreadingParked unless RINGLOOP_THREADING says otherwise.
var threadingNames = []string{0: "default", ThreadingParked: "parked", ThreadingLocked: "locked"}

// String returns "parked" or "locked", as RINGLOOP_THREADING spells them.
func (t Threading) String() string { return spell(threadingNames, t, "Threading") }

// UnmarshalText reads "parked" and "locked"; "" and "default" give 0, which
// means the default. A Threading works with flag.TextVar.
func (t *Threading) UnmarshalText(text []byte) error {
	return unmarshalText(t, text, threadingNames, "threading mode")
}

// MarshalText returns String's spelling.
func (t Threading) MarshalText() ([]byte, error) { return []byte(t.String()), nil }

func parseThreading(s string) (Threading, error) {
	return parseName[Threading](threadingNames, s, "threading mode")
}

// resolveThreading returns t, else the mode RINGLOOP_THREADING names, else 0:
// the loop then runs defaultThreading. An unknown value in the
// variable is an error naming it.
func resolveThreading(t Threading) (Threading, error) {
	if t != 0 {
		return t, nil
	}
	env, err := parseThreading(os.Getenv(threadingEnv))
	if err != nil {
		return 0, fmt.Errorf("engine: %s: %w", threadingEnv, err)
	}
	return env, nil
}

// WithThreading chooses the threading mode (default: RINGLOOP_THREADING,
// else ThreadingParked). An option wins over the environment.
func WithThreading(t Threading) Option {
	return func(c *config) error {
		if t != ThreadingParked && t != ThreadingLocked {
			return fmt.Errorf("engine: threading %v (want ThreadingParked or ThreadingLocked)", t)
		}
		c.threading = t
		return nil
	}
}
