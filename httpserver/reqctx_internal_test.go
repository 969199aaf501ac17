package httpserver

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"testing"
	"time"
)

type ctxKey struct{}

// TestReqContext: the lazy request context behaves as
// context.WithCancelCause(parent) whichever way it is used: cancelled
// before or after the real context is made, with the first cause standing,
// the parent's values, deadline and cancellation passed through, children
// and AfterFunc cancelled with it and registered with the real context
// (no goroutine each), concurrent use race-free.
func TestReqContext(t *testing.T) {
	errA, errB := errors.New("a"), errors.New("b")
	base := context.WithValue(context.Background(), ctxKey{}, "v")
	closed := func(ctx context.Context) bool {
		select {
		case <-ctx.Done():
			return true
		default:
			return false
		}
	}

	t.Run("cancel, then use", func(t *testing.T) {
		c := &reqContext{parent: base}
		if c.Err() != nil {
			t.Fatal("Err before cancel")
		}
		c.cancel(errA)
		c.cancel(errB)
		if c.inner != nil {
			t.Fatal("Err and cancel made the real context")
		}
		if c.Err() != context.Canceled || !closed(c) || context.Cause(c) != errA {
			t.Fatalf("after cancel: Err %v, Cause %v", c.Err(), context.Cause(c))
		}
	})
	t.Run("use, then cancel", func(t *testing.T) {
		c := &reqContext{parent: base}
		if closed(c) || context.Cause(c) != nil {
			t.Fatal("cancelled before cancel")
		}
		if c.Value(ctxKey{}) != "v" {
			t.Fatal("the parent's value is lost")
		}
		if _, ok := c.Deadline(); ok {
			t.Fatal("a deadline the parent has not")
		}
		child, stop := context.WithCancel(c)
		defer stop()
		ran := make(chan struct{})
		context.AfterFunc(c, func() { close(ran) })
		c.cancel(nil)
		c.cancel(errB)
		if c.Err() != context.Canceled || context.Cause(c) != context.Canceled {
			t.Fatalf("Err %v, Cause %v", c.Err(), context.Cause(c))
		}
		if !closed(child) || context.Cause(child) != context.Canceled {
			t.Fatal("the child is not cancelled with it")
		}
		select {
		case <-ran:
		case <-time.After(time.Minute):
			t.Fatal("AfterFunc did not run")
		}
	})
	t.Run("parent cancelled", func(t *testing.T) {
		parent, stop := context.WithDeadline(base, time.Now().Add(-time.Second))
		defer stop()
		c := &reqContext{parent: parent}
		if c.Err() != context.DeadlineExceeded {
			t.Fatalf("Err %v before the real context, want the parent's", c.Err())
		}
		if _, ok := c.Deadline(); !ok {
			t.Fatal("the parent's deadline is lost")
		}
		if !closed(c) || c.Err() != context.DeadlineExceeded || context.Cause(c) != context.DeadlineExceeded {
			t.Fatalf("Err %v, Cause %v", c.Err(), context.Cause(c))
		}
	})
	t.Run("children cost no goroutine", func(t *testing.T) {
		c := &reqContext{parent: base}
		before := runtime.NumGoroutine()
		var children []context.Context
		for range 100 {
			child, stop := context.WithCancelCause(c)
			defer stop(nil)
			children = append(children, child)
		}
		if n := runtime.NumGoroutine() - before; n >= 50 {
			t.Fatalf("%d goroutines for 100 children: they are not registered with the real context", n)
		}
		c.cancel(errA)
		for _, child := range children {
			if !closed(child) || context.Cause(child) != errA {
				t.Fatal("a child is not cancelled with the cause")
			}
		}
	})
	t.Run("concurrent", func(t *testing.T) {
		for range 100 {
			c := &reqContext{parent: base}
			var wg sync.WaitGroup
			wg.Add(3)
			go func() { defer wg.Done(); c.cancel(errA) }()
			go func() { defer wg.Done(); <-c.Done() }()
			go func() { defer wg.Done(); _ = c.Err(); _ = context.Cause(c) }()
			wg.Wait()
			if context.Cause(c) != errA {
				t.Fatal("the cause is lost")
			}
		}
	})
}
