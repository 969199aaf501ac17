package taskq

import (
	"context"
	"errors"
	"testing"

	"github.com/ringloop/ringloop/tasks"
)

func TestPromiseTask(t *testing.T) {
	ex := newQueueExecutor()
	f := Submit(ex, func() (string, error) { return "ok", nil })
	must(t, !f.IsDone(), "done before running")
	DrainAll(ex.q, nil)
	v, err := f.Await(context.Background())
	must(t, v == "ok" && err == nil, "result: %v %v", v, err)

	boom := errors.New("boom")
	g := Submit(ex, func() (int, error) { return 0, boom })
	DrainAll(ex.q, nil)
	must(t, g.Err() == boom, "error result: %v", g.Err())

	h := Submit(ex, func() (int, error) { panic(boom) })
	DrainAll(ex.q, nil)
	var pe *tasks.PanicError
	must(t, errors.As(h.Err(), &pe) && errors.Is(h.Err(), boom) && len(pe.Stack) > 0, "panic result: %v", h.Err())
	must(t, errors.Is(h.Err(), tasks.ErrPanicked), "a tasks.PanicError does not match tasks.ErrPanicked: %v", h.Err())

	// A value that is not an error: still ErrPanicked, the value kept.
	k := Submit(ex, func() (int, error) { panic("plain") })
	DrainAll(ex.q, nil)
	must(t, errors.As(k.Err(), &pe) && pe.Value == "plain" && errors.Is(k.Err(), tasks.ErrPanicked), "panic result: %v", k.Err())
}

func TestPromiseTaskCancel(t *testing.T) {
	ex := newQueueExecutor()
	called := false
	f := Submit(ex, func() (int, error) { called = true; return 1, nil })
	must(t, f.Cancel(), "Cancel before running")
	DrainAll(ex.q, nil)
	must(t, !called, "cancelled task ran")

	// Once running, a task cannot be cancelled.
	var g tasks.Future[int]
	g = Submit(ex, func() (int, error) {
		must(t, !g.Cancel(), "Cancel while running")
		return 2, nil
	})
	DrainAll(ex.q, nil)
	v, done, err := g.Poll()
	must(t, done && v == 2 && err == nil, "result: %v %v %v", v, err, done)
}

// TestSubmitExecutor: the future answers as a promise bound to ex would:
// Await on ex's own loop is a deadlock, and listeners run on ex by default.
func TestSubmitExecutor(t *testing.T) {
	ex := newQueueExecutor()
	f := Submit(ex, func() (int, error) { return 3, nil })
	ex.onLoop.Store(true)
	_, err := f.Await(context.Background())
	must(t, errors.Is(err, tasks.ErrDeadlock), "Await on the loop: %v", err)
	ex.onLoop.Store(false)
	var got tasks.Future[int]
	f.AddListener(nil, func(f tasks.Future[int]) { got = f })
	eq(t, DrainAll(ex.q, nil), 2, "the task, then the listener on ex")
	must(t, got == f, "the listener was not given the submitted future")
	v, err := f.Await(context.Background())
	must(t, v == 3 && err == nil, "result: %v %v", v, err)
}

func TestSubmitRejected(t *testing.T) {
	ex := newQueueExecutor()
	ex.reject = tasks.ErrShutdown
	f := Submit(ex, func() (int, error) { return 1, nil })
	must(t, errors.Is(f.Err(), tasks.ErrShutdown), "refused task's future: %v", f.Err())
}
