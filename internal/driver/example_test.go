package driver_test

import (
	"fmt"

	"github.com/ringloop/ringloop/internal/driver"
)

// Kernel profiles let the whole suite run as it would on an older kernel:
// a driver asks the profile whether a feature's kernel release is there.
func ExampleProfile_AtLeast() {
	for _, p := range driver.Profiles {
		fmt.Printf("%-6s multishot recv (6.0): %v, MSG_RING (5.18): %v\n", p, p.AtLeast(6, 0), p.AtLeast(5, 18))
	}
	_, err := driver.ParseProfile("4.19")
	fmt.Println(err != nil)
	// Output:
	// 5.10   multishot recv (6.0): false, MSG_RING (5.18): false
	// 5.15   multishot recv (6.0): false, MSG_RING (5.18): false
	// 5.19   multishot recv (6.0): false, MSG_RING (5.18): true
	// 6.1    multishot recv (6.0): true, MSG_RING (5.18): true
	// native multishot recv (6.0): true, MSG_RING (5.18): true
	// true
}

// A completion's Res is bytes, an fd or a negated errno.
func ExampleCompletion_Err() {
	ok := driver.Completion{Res: 42}
	failed := driver.Completion{Res: -104}
	fmt.Println(ok.Err(), failed.Err())
	// Output: <nil> connection reset by peer
}
