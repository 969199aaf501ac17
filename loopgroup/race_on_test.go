//go:build race

package loopgroup_test

// scale picks the small size under the race detector.
func scale(normal, race int) int { return race }
