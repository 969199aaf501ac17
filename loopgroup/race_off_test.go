//go:build !race

package loopgroup_test

// scale picks the normal size without the race detector.
func scale(normal, race int) int { return normal }
