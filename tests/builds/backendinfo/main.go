// Command backendinfo builds one loop with the default configuration, logging
// to stderr as a service would, and prints the backend it chose:
//
//	backend=epoll reason="auto: fell back to epoll: io_uring unavailable: built without liburing (...)"
//
// The tests of package builds compile it under each build configuration
// (default, the ringloop_nouring tag, no liburing header) and check its
// output. It exits 1 with the error when the loop cannot be built.
package main

import (
	"fmt"
	"log/slog"
	"os"

	"github.com/ringloop/ringloop/engine"
)

func main() {
	logger := slog.New(slog.NewTextHandler(os.Stderr, nil))
	loop, err := engine.New(engine.WithLogger(logger))
	if err != nil {
		fmt.Fprintln(os.Stderr, "backendinfo:", err)
		os.Exit(1)
	}
	info := loop.Backend()
	fmt.Printf("backend=%s reason=%q\n", info.Name, info.Reason)
	if err := loop.Close(); err != nil {
		fmt.Fprintln(os.Stderr, "backendinfo: close:", err)
		os.Exit(1)
	}
}
