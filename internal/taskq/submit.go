package taskq

import (
	"context"
	"runtime/debug"

	"github.com/ringloop/ringloop/tasks"
)

// NewPanicError returns the PanicError of a value just recovered, with the
// current goroutine's stack (call it in the deferred function).
func NewPanicError(v any) *tasks.PanicError {
	return &tasks.PanicError{Value: v, Stack: debug.Stack()}
}

// Submit runs fn on ex and returns its future, which fails with Execute's
// error when ex refuses the task (Netty's submit). The future can be
// cancelled until fn starts, not after; a panic in fn fails it with a
// *tasks.PanicError.
func Submit[T any](ex tasks.Executor, fn func() (T, error)) tasks.Future[T] {
	t := &promiseTask[T]{ex: ex, fn: fn}
	if err := ex.Execute(t); err != nil {
		t.p.Fail(err)
	}
	return t
}

// promiseTask is a Task that computes a value and completes its own promise
// with it (Netty's PromiseTask). The promise is embedded by value, so a
// Submit costs one allocation; it has no executor of its own (only package
// tasks can bind one), so Await and AddListener supply ex themselves, as a
// promise made with tasks.NewPromise(ex) would.
type promiseTask[T any] struct {
	p  tasks.Promise[T]
	ex tasks.Executor
	fn func() (T, error)
}

// Run runs fn unless the promise was cancelled first; once running it can no
// longer be cancelled.
func (t *promiseTask[T]) Run() {
	if !t.p.SetUncancellable() || t.p.IsDone() {
		return
	}
	defer func() {
		if r := recover(); r != nil {
			t.p.Fail(NewPanicError(r))
		}
	}()
	v, err := t.fn()
	if err != nil {
		t.p.Fail(err)
		return
	}
	t.p.Succeed(v)
}

func (t *promiseTask[T]) IsDone() bool                      { return t.p.IsDone() }
func (t *promiseTask[T]) IsCancelled() bool                 { return t.p.IsCancelled() }
func (t *promiseTask[T]) Err() error                        { return t.p.Err() }
func (t *promiseTask[T]) Cancel() bool                      { return t.p.Cancel() }
func (t *promiseTask[T]) Poll() (v T, done bool, err error) { return t.p.Poll() }

// Await is the promise's, with the deadlock check of its executor.
func (t *promiseTask[T]) Await(ctx context.Context) (T, error) {
	if !t.p.IsDone() && t.ex.InEventLoop() {
		var zero T
		return zero, tasks.ErrDeadlock
	}
	return t.p.Await(ctx)
}

// AddListener is the promise's, with ex as the default executor.
func (t *promiseTask[T]) AddListener(ex tasks.Executor, fn func(tasks.Future[T])) {
	if ex == nil {
		ex = t.ex
	}
	t.p.AddListener(ex, func(tasks.Future[T]) { fn(t) })
}
