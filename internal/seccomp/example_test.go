package seccomp_test

import (
	"fmt"
	"strings"

	"github.com/ringloop/ringloop/internal/seccomp"
	"golang.org/x/sys/unix"
)

// A test re-runs its own binary under the filter; the child's test calls
// seccomp.InstallFromEnv first, and io_uring_setup then fails with EPERM.
func ExampleChildCommand() {
	cmd, err := seccomp.ChildCommand(unix.EPERM, "^TestHelperProcess$")
	if err != nil {
		fmt.Println(err)
		return
	}
	out, err := cmd.CombinedOutput()
	fmt.Println(err == nil, strings.Contains(string(out), "io_uring_setup: EPERM"))
	// Output: true true
}
