package tasks

import (
	"errors"
	"fmt"
)

// PanicError is the one error a recovered panic becomes, wherever ringloop
// recovers one: a submitted function's (engine.Submit), a scheduled task, a
// connection's handler callback. errors.As finds it with the value and the
// stack; errors.Is(err, ErrPanicked) holds for it, and so does errors.Is with
// the panic value when that is an error.
type PanicError struct {
	Value any    // what was passed to panic
	Stack []byte // the goroutine's stack at the panic
}

// ErrPanicked matches every *PanicError with errors.Is.
var ErrPanicked = errors.New("tasks: panicked")

// Error says what panicked and with what.
func (e *PanicError) Error() string { return fmt.Sprintf("tasks: panicked: %v", e.Value) }

// Is reports whether target is ErrPanicked.
func (e *PanicError) Is(target error) bool { return target == ErrPanicked }

// Unwrap returns the panic value when it is an error, so errors.Is sees it.
func (e *PanicError) Unwrap() error {
	err, _ := e.Value.(error)
	return err
}
