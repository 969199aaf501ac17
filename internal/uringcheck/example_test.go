package uringcheck_test

import (
	"testing"

	"github.com/ringloop/ringloop/internal/uringcheck"
)

// A test that needs io_uring calls Need first: it skips with the reason
// where io_uring cannot run, or fails when RINGLOOP_REQUIRE_URING=1.
func ExampleNeed() {
	t := &testing.T{} // in a real test, the test's own t
	_ = func() {
		uringcheck.Need(t)
		// ... set up an io_uring driver ...
	}
}

// A package whose tests all need io_uring runs them through Main.
func ExampleMain() {
	_ = func(m *testing.M) { uringcheck.Main(m) } // func TestMain(m *testing.M)
}
