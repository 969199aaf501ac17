//go:build race && linux && cgo

package uring

// scale shrinks stress sizes under the race detector.
const scale = 4
