//go:build !cgo || ringloop_nouring

package tests

// cgoBuild: built without liburing (cgo off, or the ringloop_nouring tag)
// the engine never tries io_uring; every fallback and forced-io_uring error
// says "built without liburing".
const cgoBuild = false
