//go:build linux && cgo && !ringloop_nouring

package uring

import (
	"testing"

	"github.com/ringloop/ringloop/internal/driver"
	"github.com/ringloop/ringloop/internal/drivertest"
)

// TestGoexitInCallbackLosesNothing: a callback's Goexit leaves the rest of
// its batch to the next Wait (drivertest.GoexitLosesNothing).
func TestGoexitInCallbackLosesNothing(t *testing.T) {
	// 5.15: no SINGLE_ISSUER, so the next Wait may run on another thread.
	d, err := New(driver.Config{Profile: driver.Kernel515})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	drivertest.GoexitLosesNothing(t, d)
}
