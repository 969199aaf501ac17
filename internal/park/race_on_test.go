//go:build race

package park_test

const raceEnabled = true
