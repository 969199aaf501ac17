//go:build !cgo || !linux

package uring

import (
	"errors"
	"strings"
	"testing"

	"github.com/ringloop/ringloop/driver"
)

// TestNewWithoutCgo: without cgo, New says io_uring is unavailable and why.
func TestNewWithoutCgo(t *testing.T) {
	d, err := New(driver.Config{})
	if d != nil || !errors.Is(err, driver.ErrUringUnavailable) || !strings.Contains(err.Error(), "built without cgo") {
		t.Fatalf("New: %v, %v", d, err)
	}
}
