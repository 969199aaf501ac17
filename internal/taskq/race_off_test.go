//go:build !race

package taskq

// raceEnabled scales stress sizes down under the race detector.
const raceEnabled = false
