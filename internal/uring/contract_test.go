//go:build linux && cgo && !ringloop_nouring

package uring

import (
	"runtime"
	"testing"

	"github.com/ringloop/ringloop/internal/driver"
	"github.com/ringloop/ringloop/internal/drivertest"
)

// newTestDriver builds a driver for a test running on its own goroutine:
// SINGLE_ISSUER rings need every Wait on one OS thread, so the goroutine is
// locked to its thread until the test's cleanups have run.
func newTestDriver(t *testing.T, cfg driver.Config) driver.Driver {
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

// TestContract runs the shared driver contract suite under every profile,
// locked (a parked loop runs NewBatched: TestBatchedContract).
func TestContract(t *testing.T) {
	drivertest.RunLocked(t, newTestDriver)
}

// TestContractPlainRecv runs the suite again with receives forced to the
// last fallback (a plain recv into a buffer per op), which no profile of
// this kernel would pick by itself.
func TestContractPlainRecv(t *testing.T) {
	withRecvMode(recvPlain, func() {
		drivertest.RunLocked(t, newTestDriver)
	})
}
