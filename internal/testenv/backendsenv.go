package testenv

import (
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/ringloop/ringloop/engine"
)

// BackendsEnv, when set, lists the backends the suites' combos run
// (comma-separated: io_uring, epoll), out of those the build has. make test
// runs the full-size suites once per backend: io_uring with cgo, epoll in
// the CGO_ENABLED=0 run (the same epoll driver, which the cgo build's
// full-size run would only repeat). A name the build lacks panics: a typo
// must not quietly test nothing.
const BackendsEnv = "RINGLOOP_TEST_BACKENDS"

// testBackends returns the backends combos run: the build's, or those
// BackendsEnv names.
func testBackends() []engine.Backend {
	env := os.Getenv(BackendsEnv)
	if env == "" {
		return backends
	}
	var out []engine.Backend
	for _, name := range strings.Split(env, ",") {
		var b engine.Backend
		err := b.UnmarshalText([]byte(strings.TrimSpace(name)))
		if err != nil || !slices.Contains(backends, b) {
			panic(fmt.Sprintf("testenv: %s=%q: this build has no backend %q (it has %v)", BackendsEnv, env, name, backends))
		}
		out = append(out, b)
	}
	return out
}

// The environment variables the engine reads for operators: the backend,
// the threading mode and the kernel profile a loop defaults to.
const (
	BackendEnv       = "RINGLOOP_BACKEND"
	ThreadingEnv     = "RINGLOOP_THREADING"
	KernelProfileEnv = "RINGLOOP_KERNEL_PROFILE"
)
