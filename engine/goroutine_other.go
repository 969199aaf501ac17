//go:build !amd64 && !arm64

package engine

import "runtime"

// curg returns the calling goroutine's id, parsed from the first line of
// runtime.Stack ("goroutine 42 [running]:"): slower than the register read
// of amd64 and arm64 (goroutine.go), but exact.
func curg() uintptr {
	var buf [64]byte
	b := buf[:runtime.Stack(buf[:], false)]
	var id uintptr
	for _, c := range b[len("goroutine "):] {
		if c < '0' || c > '9' {
			break
		}
		id = id*10 + uintptr(c-'0')
	}
	return id
}
