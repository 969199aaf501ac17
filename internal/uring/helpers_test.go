//go:build linux && cgo && !ringloop_nouring

package uring

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/ringloop/ringloop/internal/driver"
	"github.com/ringloop/ringloop/internal/drivertest"
	"golang.org/x/sys/unix"
)

// newLocked builds a *Driver on the test's goroutine, locked to its thread
// until the test's cleanups have run (SINGLE_ISSUER needs one thread).
func newLocked(t *testing.T, cfg driver.Config) *Driver {
	t.Helper()
	runtime.LockOSThread()
	t.Cleanup(runtime.UnlockOSThread)
	d, err := New(cfg)
	if err != nil {
		t.Fatalf("New(%+v): %v", cfg, err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// forEachProfile runs fn as a subtest per kernel profile.
func forEachProfile(t *testing.T, fn func(t *testing.T, p driver.Profile)) {
	for _, p := range drivertest.Profiles() {
		t.Run(string(p), func(t *testing.T) { fn(t, p) })
	}
}

// withRecvMode forces the receive variant for drivers built inside fn.
func withRecvMode(m recvMode, fn func()) {
	forceRecv = &m
	defer func() { forceRecv = nil }()
	fn()
}

// countFDs counts the process's open fds.
func countFDs(t testing.TB) int { return drivertest.CountFDs(t) }

// echo checks one send and one receive on a socket pair through d.
func echo(t *testing.T, d *Driver) {
	t.Helper()
	if err := echoErr(d); err != nil {
		t.Fatal(err)
	}
}

// echoErr sends "ping" through a socket pair with d and receives it, then
// cancels the receive; it reports what went wrong.
func echoErr(d *Driver) error {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fds[0])
	defer unix.Close(fds[1])
	d.Recv(fds[1], 1)
	d.Send(fds[0], 2, []byte("ping"))
	var got []byte
	sent, ended := false, false
	deadline := time.Now().Add(10 * time.Second)
	var cbErr error
	for !(sent && ended) {
		if time.Now().After(deadline) {
			return fmt.Errorf("echo: timed out (sent %v, got %q)", sent, got)
		}
		_, err := d.Wait(10*time.Millisecond, func(c *driver.Completion) {
			switch {
			case c.Tag == 2:
				sent = true
				if c.Res != 4 {
					cbErr = fmt.Errorf("send: res %d", c.Res)
				}
			case c.Tag == 1 && c.More:
				got = append(got, c.Data...)
				if string(got) == "ping" {
					d.Cancel(fds[1], 1)
				}
			case c.Tag == 1:
				ended = true
				if c.Res != -int32(unix.ECANCELED) {
					cbErr = fmt.Errorf("recv ended with %d", c.Res)
				}
			}
		})
		if err != nil {
			return err
		}
	}
	if cbErr != nil {
		return cbErr
	}
	if string(got) != "ping" {
		return fmt.Errorf("echo: got %q", got)
	}
	return nil
}
