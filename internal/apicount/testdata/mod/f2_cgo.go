//go:build cgo

package fixture

// F2 is declared under two constraints and counted once.
func F2() {}
