//go:build !linux || !cgo

package uring

// unbuilt says why this build has no io_uring driver.
const unbuilt = "built without liburing (CGO_ENABLED=0)"
