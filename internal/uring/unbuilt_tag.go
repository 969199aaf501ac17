//go:build linux && cgo && ringloop_nouring

package uring

// unbuilt says why this build has no io_uring driver.
const unbuilt = "built without liburing (build tag ringloop_nouring)"
