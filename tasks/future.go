package tasks

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/ringloop/ringloop/internal/loopctl"
)

// Future is the result of an asynchronous operation (Netty's Future):
// poll it, wait for it, or attach listeners.
type Future[T any] interface {
	// Await waits until the future is done or ctx ends, and returns the
	// value and error (ctx.Err() when ctx ended first). On the executor the
	// promise belongs to it returns ErrDeadlock instead of waiting for a
	// future that is not done: the loop would wait for itself.
	Await(ctx context.Context) (T, error)
	// Poll returns the value and error without waiting; done is false
	// (and v, err are zero) while the future is pending.
	Poll() (v T, done bool, err error)
	// IsDone reports whether the future succeeded, failed or was cancelled.
	IsDone() bool
	// IsCancelled reports whether the future was cancelled.
	IsCancelled() bool
	// Err is nil until the future is done, then its error: nil on success,
	// ErrCancelled (which wraps context.Canceled) when cancelled.
	Err() error
	// Cancel completes a pending future with ErrCancelled. It returns false
	// if the future was already done or is uncancellable.
	Cancel() bool
	// AddListener arranges for fn to run exactly once when the future is
	// done (at once if it already is), on ex. A nil ex means the promise's
	// own executor; with no executor either, fn runs inline in the
	// completing goroutine (or in AddListener when already done). Pass
	// Inline to run inline regardless. When ex is the caller's own loop
	// (ex.InEventLoop()), fn runs inline too. An event loop takes
	// listeners even with its task ring full. If ex
	// refuses fn (shut down, or a plain Executor that is full), fn runs on
	// a goroutine of its own rather than being lost, never on the
	// completing goroutine, which may be another loop: fn then runs
	// concurrently with whatever ex still runs. Listeners added before
	// completion run in the order they were added, on an executor that
	// takes them all.
	AddListener(ex Executor, fn func(Future[T]))
}

// promise states
const (
	pending uint32 = iota
	uncancellable
	succeeded
	failed
	cancelled
)

// Promise is a writable Future. It costs no goroutine and allocates no
// channel unless some caller actually blocks in Await; listeners are kept
// in the promise and run by whoever completes it. The zero Promise is
// pending and has no executor.
type Promise[T any] struct {
	state atomic.Uint32
	ex    Executor

	mu        sync.Mutex
	val       T
	err       error
	done      chan struct{} // made by the first Await that blocks
	first     listener[T]   // the usual single listener, without a slice
	listeners []listener[T]
}

type listener[T any] struct {
	ex Executor
	fn func(Future[T])
}

// NewPromise returns a pending promise bound to ex (which may be nil): ex is
// the default executor of its listeners, and Await on ex's own loop returns
// ErrDeadlock.
func NewPromise[T any](ex Executor) *Promise[T] {
	return &Promise[T]{ex: ex}
}

// Succeeded returns a future already done with v; it never blocks and runs
// listeners at once.
func Succeeded[T any](v T) Future[T] {
	p := &Promise[T]{val: v}
	p.state.Store(succeeded)
	return p
}

// Failed returns a future already failed with err (which must not be nil).
func Failed[T any](err error) Future[T] {
	if err == nil {
		panic("tasks: Failed(nil)")
	}
	p := &Promise[T]{err: err}
	p.state.Store(failed)
	return p
}

// Succeed completes the promise with v. It returns false if it was already
// done (the value is then dropped).
func (p *Promise[T]) Succeed(v T) bool { return p.complete(v, nil, succeeded) }

// Fail completes the promise with err, which must not be nil. It returns
// false if the promise was already done.
func (p *Promise[T]) Fail(err error) bool {
	if err == nil {
		panic("tasks: Promise.Fail(nil)")
	}
	var zero T
	return p.complete(zero, err, failed)
}

// Cancel implements Future.
func (p *Promise[T]) Cancel() bool {
	if p.state.Load() != pending {
		return false
	}
	var zero T
	return p.complete(zero, ErrCancelled, cancelled)
}

// SetUncancellable makes later Cancel calls fail, for work that has started
// and cannot be taken back (Netty's setUncancellable). It returns false only
// if the promise was already cancelled.
func (p *Promise[T]) SetUncancellable() bool {
	if p.state.CompareAndSwap(pending, uncancellable) {
		return true
	}
	return p.state.Load() != cancelled
}

func (p *Promise[T]) complete(v T, err error, st uint32) bool {
	p.mu.Lock()
	if s := p.state.Load(); s > uncancellable || (st == cancelled && s == uncancellable) {
		p.mu.Unlock()
		return false
	}
	p.val, p.err = v, err
	p.state.Store(st) // publishes val and err to lock-free readers
	ch := p.done
	first, rest := p.first, p.listeners
	p.first, p.listeners = listener[T]{}, nil
	p.mu.Unlock()
	if ch != nil {
		close(ch)
	}
	if first.fn != nil {
		p.notify(first)
	}
	for _, l := range rest {
		p.notify(l)
	}
	return true
}

// IsDone implements Future.
func (p *Promise[T]) IsDone() bool { return p.state.Load() > uncancellable }

// IsCancelled implements Future.
func (p *Promise[T]) IsCancelled() bool { return p.state.Load() == cancelled }

// Err implements Future.
func (p *Promise[T]) Err() error {
	if !p.IsDone() {
		return nil
	}
	return p.err
}

// Poll implements Future.
func (p *Promise[T]) Poll() (v T, done bool, err error) {
	if !p.IsDone() {
		return v, false, nil
	}
	return p.val, true, p.err
}

// Await implements Future.
func (p *Promise[T]) Await(ctx context.Context) (T, error) {
	if p.IsDone() {
		return p.val, p.err
	}
	var zero T
	if p.ex != nil && p.ex.InEventLoop() {
		return zero, ErrDeadlock
	}
	if err := ctx.Err(); err != nil {
		return zero, err
	}
	p.mu.Lock()
	if p.IsDone() {
		p.mu.Unlock()
		return p.val, p.err
	}
	if p.done == nil {
		p.done = make(chan struct{})
	}
	ch := p.done
	p.mu.Unlock()
	select {
	case <-ch:
		return p.val, p.err
	case <-ctx.Done():
		return zero, ctx.Err()
	}
}

// AddListener implements Future.
func (p *Promise[T]) AddListener(ex Executor, fn func(Future[T])) {
	if ex == nil {
		ex = p.ex
	}
	l := listener[T]{ex: ex, fn: fn}
	if !p.IsDone() {
		p.mu.Lock()
		if !p.IsDone() {
			if p.first.fn == nil && len(p.listeners) == 0 {
				p.first = l
			} else {
				p.listeners = append(p.listeners, l)
			}
			p.mu.Unlock()
			return
		}
		p.mu.Unlock()
	}
	p.notify(l)
}

// notify runs one listener of the done promise.
func (p *Promise[T]) notify(l listener[T]) {
	if l.ex != nil && l.ex != Inline && !l.ex.InEventLoop() {
		fn := l.fn
		t := Func(func() { fn(p) })
		var err error
		if c, ok := l.ex.(loopctl.Loop); ok {
			// An event loop: its control ring, which the bound a user may
			// set on its task ring does not apply to, since the listener
			// finishes work the loop already accepted.
			err = loopctl.Run(c, t)
		} else {
			err = l.ex.Execute(t)
		}
		if err != nil {
			// Refused: a goroutine of its own, not the completing one
			// (which may be another loop), rather than lose it.
			go p.run(l.fn)
		}
		return
	}
	p.run(l.fn)
}

// run calls a listener, reporting a panic.
func (p *Promise[T]) run(fn func(Future[T])) {
	defer func() {
		if r := recover(); r != nil {
			slog.Error("tasks: future listener panicked", "panic", r)
		}
	}()
	fn(p)
}
