//go:build amd64 || arm64

package engine

// curg returns an identity of the calling goroutine, stable for its life
// and distinct from every other live goroutine's: the address of its
// runtime record on amd64 and arm64 (read from the g register, no system
// call), its id elsewhere. InEventLoop compares it with the loop
// goroutine's, which is sound in both threading modes (a parked loop moves
// between threads, so a thread id cannot identify it).
func curg() uintptr
