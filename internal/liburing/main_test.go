//go:build linux && cgo && !ringloop_nouring

package liburing

import (
	"testing"

	"github.com/ringloop/ringloop/internal/uringcheck"
)

// TestMain runs this package's tests, which all need io_uring, only where it
// can run (or fails where it is required); see package uringcheck.
func TestMain(m *testing.M) { uringcheck.Main(m) }
