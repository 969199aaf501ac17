package uringcheck_test

import (
	"fmt"
	"testing"

	"github.com/ringloop/ringloop/internal/uringcheck"
)

// TestHost prints this host's io_uring status (make test shows this line)
// and fails where io_uring cannot run but is required.
func TestHost(t *testing.T) {
	fmt.Println(uringcheck.Status())
	if uringcheck.Unavailable() != "" && uringcheck.Required() {
		t.Fatal(uringcheck.Status())
	}
}
