package tests

import "testing"

func scale(normal, race int) int {
	if raceEnabled || testing.Short() {
		return race
	}
	return normal
}
