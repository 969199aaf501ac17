package engine

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/ringloop/ringloop/internal/driver"
	"github.com/ringloop/ringloop/internal/epoll"
	"github.com/ringloop/ringloop/internal/uring"
)

// Backend names an I/O driver: the one a loop is asked for (WithBackend,
// RINGLOOP_BACKEND) and the one it runs (Loop.Backend().Name). It is
// spelled "io_uring" and "epoll" everywhere: String, UnmarshalText,
// RINGLOOP_BACKEND, logs and errors.
type Backend int

const (
	// BackendAuto uses io_uring when the probe finds what the loop needs,
	// else epoll, logging the reason once.
	BackendAuto Backend = iota
	// BackendUring is io_uring; asked for, New fails where it is refused.
	BackendUring
	// BackendEpoll is epoll.
	BackendEpoll
)

// backendEnv names the environment variable operators use to force a backend
// ("io_uring" or "epoll").
const backendEnv = "RINGLOOP_BACKEND"

// backendNames spells each Backend as RINGLOOP_BACKEND does.
var backendNames = []string{BackendAuto: "auto", BackendUring: "io_uring", BackendEpoll: "epoll"}

// String returns "auto", "io_uring" or "epoll", as RINGLOOP_BACKEND spells
// them.
func (b Backend) String() string { return spell(backendNames, b, "Backend") }

// UnmarshalText reads "auto", "io_uring" and "epoll" ("" is auto), so a
// Backend works with flag.TextVar and encoding packages.
func (b *Backend) UnmarshalText(text []byte) error {
	return unmarshalText(b, text, backendNames, "backend")
}

// MarshalText returns String's spelling.
func (b Backend) MarshalText() ([]byte, error) { return []byte(b.String()), nil }

func parseBackend(s string) (Backend, error) { return parseName[Backend](backendNames, s, "backend") }

// BackendInfo is what Loop.Backend reports: the backend a loop runs, how it
// waits, which driver that makes, what the kernel gives it and why. String
// is one short line for a startup log; Reason and Features (whose String
// gives each feature's reason) are the long form.
//
// Features.Backend names the driver: "io_uring" (a locked loop on io_uring:
// every op a request on the loop's ring), "epoll" (the epoll driver) or
// "epoll+io_uring" (a parked loop on io_uring: readiness from epoll, the
// receives and sends of the ready connections as one batch of ring requests
// per iteration, which complete inside the loop's own io_uring_enter).
type BackendInfo struct {
	Name      Backend   // BackendUring or BackendEpoll
	Threading Threading // how the loop waits
	Features  Features  // the driver (Backend), what it does on this kernel, each choice's reason
	Reason    string    // why this backend was chosen
}

// summaryMax bounds String: a startup log line has room for it beside the
// logger's own fields.
const summaryMax = 100

// String is a one-line summary under 100 bytes, e.g. "io_uring locked
// (kernel 6.18; multishot recv+accept, buf_ring, msg_ring, defer_taskrun)"
// or "io_uring parked (kernel 6.18; epoll+io_uring, batched ring I/O,
// epoll_pwait2)"; a profile other than native is named ("kernel 6.18 as
// 5.10"), and so is a fall back from io_uring.
func (b BackendInfo) String() string {
	s := b.Name.String() + " " + b.Threading.String() + " (kernel " + kernelVersion()
	if p := b.Features.Profile; p != "" && p != driver.Native {
		s += " as " + string(p)
	}
	if strings.HasPrefix(b.Reason, fallbackReason) {
		s += "; io_uring unavailable"
	}
	s += "; " + b.featureSummary()
	if len(s) > summaryMax-1 {
		s = s[:summaryMax-4] + "..."
	}
	return s + ")"
}

// featureSummary names the features that shape a backend's throughput,
// briefly; Features.String lists them all.
func (b BackendInfo) featureSummary() string {
	f := b.Features
	wait := "epoll_wait"
	if f.EpollPwait2 {
		wait = "epoll_pwait2"
	}
	switch {
	case b.Name == BackendEpoll:
		return wait
	case f.Backend == driver.NameEpollURing: // see openUring
		return f.Backend + ", batched ring I/O, " + wait
	}
	var on []string
	switch {
	case f.MultishotRecv && f.MultishotAccept:
		on = append(on, "multishot recv+accept")
	case f.MultishotRecv:
		on = append(on, "multishot recv")
	case f.MultishotAccept:
		on = append(on, "multishot accept")
	}
	switch {
	case f.BufRing:
		on = append(on, "buf_ring")
	case f.PolledRecv:
		on = append(on, "polled recv")
	}
	if f.MsgRing {
		on = append(on, "msg_ring")
	}
	if f.DeferTaskrun {
		on = append(on, "defer_taskrun")
	}
	if len(on) == 0 {
		return "single-shot ops"
	}
	return strings.Join(on, ", ")
}

// kernelVersion is the running kernel's major.minor ("6.18"), or "?".
var kernelVersion = sync.OnceValue(func() string {
	var u unix.Utsname
	if unix.Uname(&u) != nil {
		return "?"
	}
	rel := unix.ByteSliceToString(u.Release[:])
	parts := strings.SplitN(rel, ".", 3)
	if len(parts) < 2 {
		return rel
	}
	minor := parts[1]
	if i := strings.IndexFunc(minor, func(r rune) bool { return r < '0' || r > '9' }); i >= 0 {
		minor = minor[:i]
	}
	if _, err := strconv.Atoi(parts[0]); err != nil {
		return rel
	}
	return parts[0] + "." + minor
})

// fallbackReason starts the Reason of a loop that auto moved to epoll.
const fallbackReason = "auto: fell back to epoll"

// fallbackLogged makes the fallback warning appear once per process, on the
// logger of the first loop that falls back; every loop still reports its
// reason through Backend().
var fallbackLogged sync.Once

// openDriver builds the driver the configuration asks for. An explicit
// option wins over RINGLOOP_BACKEND, which wins over auto.
//
// Each backend's driver is set up for the threading mode the loop will run
// on it (c.threading, else defaultThreading).
func openDriver(c *config) (driver.Driver, string, error) {
	if c.newDriver != nil {
		c.drv.Parked = c.parkedOn(BackendEpoll) // tests inject epoll fakes, or open their own
		d, err := c.newDriver(c.drv)
		return d, "injected driver", err
	}
	b := c.backend
	why := "forced by option"
	if b == BackendAuto {
		env, err := parseBackend(os.Getenv(backendEnv))
		if err != nil {
			return nil, "", fmt.Errorf("engine: %s: %w", backendEnv, err)
		}
		b, why = env, "forced by "+backendEnv+"="+os.Getenv(backendEnv)
	}
	switch b {
	case BackendUring:
		c.drv.Parked = c.parkedOn(BackendUring)
		d, err := openUring(c.drv)
		if err != nil {
			return nil, "", fmt.Errorf("engine: io_uring backend %s: %w", why, err)
		}
		return d, why, nil
	case BackendEpoll:
		c.drv.Parked = c.parkedOn(BackendEpoll)
		d, err := epoll.New(c.drv)
		return d, why, err
	}
	c.drv.Parked = c.parkedOn(BackendUring)
	d, err := openUring(c.drv)
	if err == nil {
		return d, "auto: io_uring available", nil
	}
	reason := fallbackReason + ": " + err.Error()
	if !errors.Is(err, driver.ErrUringUnavailable) {
		reason = fallbackReason + " after an unexpected io_uring error: " + err.Error()
	}
	fallbackLogged.Do(func() {
		c.logger.Warn("ringloop: io_uring unavailable, serving on epoll", slog.String("reason", err.Error()))
	})
	c.drv.Parked = c.parkedOn(BackendEpoll)
	e, eerr := epoll.New(c.drv)
	if eerr != nil {
		return nil, "", fmt.Errorf("engine: no backend: %v; epoll: %w", err, eerr)
	}
	return e, reason, nil
}

// openUring builds the io_uring driver for the loop's threading mode: a
// parked loop runs epoll+io_uring (uring.NewBatched), whose receives and
// sends complete inline on the loop's own thread; a locked loop the ring
// (uring.New). A parked loop on a plain ring lost to both: its completion
// work runs on whichever thread submitted, which the goroutine has usually
// left (internal/uring's package doc).
func openUring(cfg driver.Config) (driver.Driver, error) {
	if cfg.Parked {
		return uring.NewBatched(cfg)
	}
	d, err := uring.New(cfg)
	if err != nil {
		return nil, err
	}
	return d, nil
}

// parkedOn reports whether a loop on backend b runs parked.
func (c *config) parkedOn(Backend) bool {
	th := c.threading
	if th == 0 {
		th = defaultThreading
	}
	return th == ThreadingParked
}
