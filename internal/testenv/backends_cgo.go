//go:build cgo && !ringloop_nouring

package testenv

import "github.com/ringloop/ringloop/engine"

// backends this build can run: io_uring (liburing through cgo) and epoll.
var backends = []engine.Backend{engine.BackendUring, engine.BackendEpoll}
