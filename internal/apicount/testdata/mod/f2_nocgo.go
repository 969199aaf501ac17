//go:build !cgo

package fixture

func F2() {}
