//go:build race

package timers

// Sizes under the race detector, which slows the heap down about tenfold.
const (
	modelOps    = 150_000
	stressProcs = 4
)
