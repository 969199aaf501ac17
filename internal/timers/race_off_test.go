//go:build !race

package timers

// Full sizes without the race detector.
const (
	modelOps    = 3_000_000
	stressProcs = 8
)
