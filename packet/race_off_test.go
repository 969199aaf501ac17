//go:build !race

package packet_test

const raceEnabled = false
