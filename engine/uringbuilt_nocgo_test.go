//go:build !(linux && cgo && !ringloop_nouring)

package engine

// uringBuilt: this build has the io_uring driver (it needs cgo).
const uringBuilt = false
