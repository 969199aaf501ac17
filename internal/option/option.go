// Package option builds the functional options whose only rule is a bound
// on their value (a positive size, a non-negative duration, a logger that is
// not nil), for engine, loopgroup, netconn, httpserver and websocket: each
// With* function states its value, its bound and where the value goes, and
// the check and the wording of its error are written once, here.
package option

import (
	"errors"
	"fmt"
)

// Number is what Positive and NonNegative bound (time.Duration among them).
type Number interface {
	~int | ~int64
}

// Positive returns an option that calls set, or fails with
// "<what> <v> (expected > 0)" when v <= 0.
func Positive[C any, T Number](what string, v T, set func(*C)) func(*C) error {
	return func(c *C) error {
		if v <= 0 {
			return fmt.Errorf("%s %v (expected > 0)", what, v)
		}
		set(c)
		return nil
	}
}

// NonNegative returns an option that calls set, or fails with
// "<what> <v> (expected >= 0<zero>)" when v < 0; zero says what 0 means
// ("; 0 = default"), or is empty.
func NonNegative[C any, T Number](what string, v T, zero string, set func(*C)) func(*C) error {
	return func(c *C) error {
		if v < 0 {
			return fmt.Errorf("%s %v (expected >= 0%s)", what, v, zero)
		}
		set(c)
		return nil
	}
}

// Required returns an option that calls set, or fails with the error msg
// when v is its type's zero value (a nil pointer, an empty string).
func Required[C any, T comparable](v T, msg string, set func(*C)) func(*C) error {
	return func(c *C) error {
		var zero T
		if v == zero {
			return errors.New(msg)
		}
		set(c)
		return nil
	}
}
