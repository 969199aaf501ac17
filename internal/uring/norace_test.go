//go:build !race && linux && cgo && !ringloop_nouring

package uring

// scale shrinks stress sizes under the race detector.
const scale = 1
