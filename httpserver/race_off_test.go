//go:build !race

package httpserver_test

// raceEnabled scales upload sizes down under the race detector.
const raceEnabled = false
