package engine

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"

	"github.com/ringloop/ringloop/driver"
	"github.com/ringloop/ringloop/internal/epoll"
	"github.com/ringloop/ringloop/internal/uring"
)

// Backend chooses the I/O driver.
type Backend int

const (
	// BackendAuto uses io_uring when the probe finds what the loop needs,
	// else epoll, logging the reason once.
	BackendAuto Backend = iota
	// BackendUring forces io_uring; New fails where it is refused.
	BackendUring
	// BackendEpoll forces epoll.
	BackendEpoll
)

// BackendEnv names the environment variable operators use to force a backend
// ("uring" or "epoll").
const BackendEnv = "RINGLOOP_BACKEND"

// String names the backend as RINGLOOP_BACKEND spells it.
func (b Backend) String() string {
	switch b {
	case BackendUring:
		return "uring"
	case BackendEpoll:
		return "epoll"
	}
	return "auto"
}

// ParseBackend reads "auto", "uring" (or "io_uring") and "epoll"; "" is auto.
func ParseBackend(s string) (Backend, error) {
	switch s {
	case "", "auto":
		return BackendAuto, nil
	case "uring", "io_uring":
		return BackendUring, nil
	case "epoll":
		return BackendEpoll, nil
	}
	return BackendAuto, fmt.Errorf("engine: unknown backend %q (want auto, uring or epoll)", s)
}

// BackendInfo says which driver a loop runs and why.
type BackendInfo struct {
	Name     string          // "io_uring" or "epoll"
	Features driver.Features // what the driver does on this kernel
	Reason   string          // why this driver was chosen
	// Threading is the loop's threading mode (how it waits).
	Threading Threading
}

// String renders the driver, the threading mode, the reason the driver was
// chosen and its features.
func (b BackendInfo) String() string {
	return b.Name + " (" + b.Threading.String() + " loop): " + b.Reason + "; " + b.Features.String()
}

// fallbackLogged makes the fallback warning appear once per process, on the
// logger of the first loop that falls back; every loop still reports its
// reason through Backend().
var fallbackLogged sync.Once

// openDriver builds the driver the configuration asks for. An explicit
// option wins over RINGLOOP_BACKEND, which wins over auto.
//
// Each backend's driver is set up for the threading mode the loop will run
// on it (c.threading, else that backend's DefaultThreading).
func openDriver(c *config) (driver.Driver, string, error) {
	if c.newDriver != nil {
		c.drv.Parked = c.parkedOn(BackendEpoll) // tests inject epoll fakes, or open their own
		d, err := c.newDriver(c.drv)
		return d, "injected driver", err
	}
	b := c.backend
	why := "forced by option"
	if b == BackendAuto {
		env, err := ParseBackend(os.Getenv(BackendEnv))
		if err != nil {
			return nil, "", fmt.Errorf("engine: %s: %w", BackendEnv, err)
		}
		b, why = env, "forced by "+BackendEnv+"="+os.Getenv(BackendEnv)
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
	reason := "auto: fell back to epoll: " + err.Error()
	if !errors.Is(err, driver.ErrUringUnavailable) {
		reason = "auto: fell back to epoll after an unexpected io_uring error: " + err.Error()
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
// parked loop runs the readiness variant (uring.NewReady), whose receives
// and sends complete inline on the loop's own thread; a locked loop the
// ring (uring.New). A parked loop on a plain ring lost to both (its
// completion work runs on whichever thread submitted, which the goroutine
// has usually left: 1.2-1.6x the CPU per request, see the package doc).
func openUring(cfg driver.Config) (driver.Driver, error) {
	if cfg.Parked {
		return uring.NewReady(cfg)
	}
	d, err := uring.New(cfg)
	if err != nil {
		return nil, err
	}
	return d, nil
}

// parkedOn reports whether a loop on backend b runs parked.
func (c *config) parkedOn(b Backend) bool {
	th := c.threading
	if th == 0 {
		th = DefaultThreading(b)
	}
	return th == ThreadingParked
}
