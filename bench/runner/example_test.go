package runner_test

import (
	"fmt"

	"github.com/ringloop/ringloop/bench/runner"
)

func ExampleSuite() {
	cases, _ := runner.Suite(runner.Quick)
	for _, c := range cases {
		fmt.Printf("%s: %s\n", c.Scenario.ID, c.Title())
	}
	// Output:
	// pinned-1: echo, 1 conn, 128 B
	// pinned-1: echo, 64 conn, 128 B
	// pinned-1: HTTP plaintext keep-alive, 50 conn (wrk)
	// pinned-1: HTTP open loop, 50 conn, 70% of net/http's peak
	// inproc-2: echo, 1 conn, 128 B
	// inproc-2: echo, 64 conn, 128 B
	// pinned-1: echo, 64 conn, 128 B: system calls
	// pinned-1: echo, 10000 idle connections
	// pinned-1: TLS echo, 64 conn, 1 KiB
	// pinned-1: HTTPS plaintext keep-alive, 50 conn (wrk)
	// pinned-1: echo server at rest, no client, 3s
	// pinned-1: UDP echo, 64 client sockets × 8 in flight, 64 B
}
