//go:build !(linux && cgo)

package engine

// uringBuilt: this build has the io_uring driver (it needs cgo).
const uringBuilt = false
