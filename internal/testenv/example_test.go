package testenv_test

import (
	"fmt"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/internal/driver"
	"github.com/ringloop/ringloop/internal/testenv"
)

// Every integration test runs once per combo: each backend this build has,
// under each kernel profile, in each threading mode; a combo names its
// subtest.
func ExampleCombos() {
	combos := testenv.Combos()
	fmt.Println(len(combos) > 0, testenv.Combo{Backend: engine.BackendEpoll, Profile: driver.Kernel510, Threading: engine.ThreadingParked})
	// Output: true epoll/5.10/parked
}
