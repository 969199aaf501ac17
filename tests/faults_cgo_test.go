//go:build cgo && !ringloop_nouring

package tests

// cgoBuild: this test binary has the io_uring driver, so a refused io_uring
// shows up as the refusal's errno.
const cgoBuild = true
