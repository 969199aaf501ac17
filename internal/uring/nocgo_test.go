//go:build !linux || !cgo || ringloop_nouring

package uring

import (
	"errors"
	"strings"
	"testing"

	"github.com/ringloop/ringloop/internal/driver"
)

// TestNewWithoutLiburing: built without liburing, New says io_uring is
// unavailable and why.
func TestNewWithoutLiburing(t *testing.T) {
	d, err := New(driver.Config{})
	if d != nil || !errors.Is(err, driver.ErrUringUnavailable) || !strings.Contains(err.Error(), "built without liburing") {
		t.Fatalf("New: %v, %v", d, err)
	}
}
