package loopgroup

import (
	"context"
	"errors"
	"time"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/tasks"
)

// The group does no work itself: every executor method runs on Next()
// (Netty's MultithreadEventExecutorGroup), as engine.Loops says; for a
// result, engine.Submit(g, fn).

// Execute queues t on the next loop (see engine.Loop.Execute).
func (g *Group) Execute(t tasks.Task) error { return g.Next().Execute(t) }

// Schedule runs t once on the next loop after delay (see
// engine.Loop.Schedule).
func (g *Group) Schedule(t tasks.Task, delay time.Duration) (tasks.Future[struct{}], error) {
	return g.Next().Schedule(t, delay)
}

// ScheduleAtFixedRate runs t on the next loop at a fixed rate (see
// engine.Loop.ScheduleAtFixedRate); every run happens on that one loop.
func (g *Group) ScheduleAtFixedRate(t tasks.Task, initial, period time.Duration) (tasks.Future[struct{}], error) {
	return g.Next().ScheduleAtFixedRate(t, initial, period)
}

// ScheduleWithFixedDelay runs t on the next loop with a fixed delay between
// runs; every run happens on that one loop.
func (g *Group) ScheduleWithFixedDelay(t tasks.Task, initial, delay time.Duration) (tasks.Future[struct{}], error) {
	return g.Next().ScheduleWithFixedDelay(t, initial, delay)
}

// InvokeAll runs every fn on one loop of g (Netty forwards the whole
// collection to next()), waits until all are done or ctx ends, and returns
// their futures in order. When ctx ends first it cancels the tasks that have
// not started and returns ctx.Err() with the futures. Calling it from a loop
// of g returns ErrCalledFromLoop: the loop would wait for itself.
func InvokeAll[T any](ctx context.Context, g *Group, fns []func() (T, error)) ([]tasks.Future[T], error) {
	if g.InEventLoop() {
		return nil, ErrCalledFromLoop
	}
	l := g.Next()
	fs := make([]tasks.Future[T], len(fns))
	for i, fn := range fns {
		fs[i] = engine.Submit(l, fn)
	}
	for _, f := range fs {
		if _, err := f.Await(ctx); err != nil && ctx.Err() != nil {
			for _, f := range fs {
				f.Cancel()
			}
			return fs, ctx.Err()
		}
	}
	return fs, nil
}

// ErrNoTasks is InvokeAny's error for an empty list.
var ErrNoTasks = errors.New("loopgroup: InvokeAny with no tasks")

// InvokeAny runs the fns on one loop of g, one after another, and returns the
// result of the first that succeeds; the others are cancelled (those not yet
// started never run). If all fail it returns the last error; if ctx ends
// first, ctx.Err(). Calling it from a loop of g returns ErrCalledFromLoop.
func InvokeAny[T any](ctx context.Context, g *Group, fns []func() (T, error)) (T, error) {
	var zero T
	if g.InEventLoop() {
		return zero, ErrCalledFromLoop
	}
	if len(fns) == 0 {
		return zero, ErrNoTasks
	}
	l := g.Next()
	type result struct {
		v   T
		err error
	}
	done := make(chan result, len(fns))
	fs := make([]tasks.Future[T], len(fns))
	for i, fn := range fns {
		fs[i] = engine.Submit(l, fn)
		fs[i].AddListener(tasks.Inline, func(f tasks.Future[T]) {
			v, _, err := f.Poll()
			done <- result{v, err}
		})
	}
	defer func() {
		for _, f := range fs {
			f.Cancel()
		}
	}()
	var last error
	for range fns {
		select {
		case r := <-done:
			if r.err == nil {
				return r.v, nil
			}
			last = r.err
		case <-ctx.Done():
			return zero, ctx.Err()
		}
	}
	return zero, last
}
