package testenv_test

import (
	"fmt"

	"github.com/ringloop/ringloop/internal/testenv"
)

// Every integration test runs once per combo: each backend this build has,
// under each kernel profile.
func ExampleCombos() {
	n := 0
	for _, c := range testenv.Combos() {
		if c.Backend.String() == "epoll" {
			n++
		}
	}
	fmt.Println(n, "epoll combos")
	// Output: 5 epoll combos
}
