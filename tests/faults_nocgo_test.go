//go:build !cgo

package tests

// cgoBuild: without cgo the engine never tries io_uring; every fallback and
// forced-io_uring error says "built without cgo".
const cgoBuild = false
