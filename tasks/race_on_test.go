//go:build race

package tasks

// raceEnabled scales stress sizes down under the race detector.
const raceEnabled = true
