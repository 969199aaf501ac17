package tasks

import (
	"context"
	"errors"
	"testing"
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
	var pe *PanicError
	must(t, errors.As(h.Err(), &pe) && errors.Is(h.Err(), boom) && len(pe.Stack) > 0, "panic result: %v", h.Err())
	must(t, errors.Is(h.Err(), ErrPanicked), "a PanicError does not match ErrPanicked: %v", h.Err())

	// A value that is not an error: still ErrPanicked, the value kept.
	k := Submit(ex, func() (int, error) { panic("plain") })
	DrainAll(ex.q, nil)
	must(t, errors.As(k.Err(), &pe) && pe.Value == "plain" && errors.Is(k.Err(), ErrPanicked), "panic result: %v", k.Err())
}

func TestPromiseTaskCancel(t *testing.T) {
	ex := newQueueExecutor()
	called := false
	f := Submit(ex, func() (int, error) { called = true; return 1, nil })
	must(t, f.Cancel(), "Cancel before running")
	DrainAll(ex.q, nil)
	must(t, !called, "cancelled task ran")

	// Once running, a task cannot be cancelled.
	var pt *PromiseTask[int]
	pt = NewPromiseTask(ex, func() (int, error) {
		must(t, !pt.Cancel(), "Cancel while running")
		return 2, nil
	})
	pt.Run()
	v, done, err := pt.Poll()
	must(t, done && v == 2 && err == nil, "result: %v %v %v", v, err, done)
}

func TestSubmitRejected(t *testing.T) {
	ex := newQueueExecutor()
	ex.reject = ErrShutdown
	f := Submit(ex, func() (int, error) { return 1, nil })
	must(t, errors.Is(f.Err(), ErrShutdown), "refused task's future: %v", f.Err())
}
