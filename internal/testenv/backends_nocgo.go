//go:build !cgo || ringloop_nouring

package testenv

import "github.com/ringloop/ringloop/engine"

// backends this build can run: built without liburing (cgo off, or the
// ringloop_nouring tag) there is no io_uring driver.
var backends = []engine.Backend{engine.BackendEpoll}
