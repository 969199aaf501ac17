//go:build race

package drivertest

// raceEnabled scales iteration counts down under the race detector (sizes
// the contract names, such as the 1000-connection accept storm, stay).
const raceEnabled = true
