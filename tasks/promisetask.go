package tasks

import (
	"errors"
	"fmt"
	"runtime/debug"
)

// PromiseTask is a Task that computes a value and completes its own promise
// with it (Netty's PromiseTask, what newTaskFor wraps a Callable in). Hand
// it to an executor and give callers its Future.
type PromiseTask[T any] struct {
	Promise[T]
	fn func() (T, error)
}

// NewPromiseTask returns a task that runs fn and completes the embedded
// promise, bound to ex, with fn's result.
func NewPromiseTask[T any](ex Executor, fn func() (T, error)) *PromiseTask[T] {
	t := &PromiseTask[T]{fn: fn}
	t.ex = ex
	return t
}

// Run runs fn unless the promise was cancelled first; once running it can no
// longer be cancelled. A panic in fn fails the promise with a *PanicError.
func (t *PromiseTask[T]) Run() {
	if !t.SetUncancellable() || t.IsDone() {
		return
	}
	defer func() {
		if r := recover(); r != nil {
			t.Fail(NewPanicError(r))
		}
	}()
	v, err := t.fn()
	if err != nil {
		t.Fail(err)
		return
	}
	t.Succeed(v)
}

// Submit runs fn on ex and returns its future, which fails with Execute's
// error when ex refuses the task.
func Submit[T any](ex Executor, fn func() (T, error)) Future[T] {
	t := NewPromiseTask(ex, fn)
	if err := ex.Execute(t); err != nil {
		t.Fail(err)
	}
	return t
}

// PanicError is the one error a recovered panic becomes, wherever ringloop
// recovers one: a PromiseTask's function (Submit), a scheduled task, a
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

// NewPanicError returns the PanicError of a value just recovered, with the
// current goroutine's stack (call it in the deferred function).
func NewPanicError(v any) *PanicError { return &PanicError{Value: v, Stack: debug.Stack()} }
