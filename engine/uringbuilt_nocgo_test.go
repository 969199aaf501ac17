//go:build !(linux && cgo && !ringloop_nouring)

package engine

// uringBuilt: this build has the io_uring driver (it needs liburing).
const uringBuilt = false
