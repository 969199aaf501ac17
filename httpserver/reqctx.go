package httpserver

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// reqContext is an adapter request's context: cancelled with a cause when
// the handler returns or the connection ends, as net/http's. Most handlers
// never wait on it, so the context package's cancel context (two
// allocations) is made only when something asks for more than Err or
// Deadline: Done, Value (context.Cause and WithCancel's parent lookup go
// through Value, and then find that real context's answers) or a child
// context. Until then a cancellation is only recorded, and replayed when
// the real context is made.
type reqContext struct {
	parent context.Context

	made     atomic.Pointer[context.Context] // &inner once it is made: its readers need no lock
	mu       sync.Mutex
	inner    context.Context // the real context, once made
	cancelFn context.CancelCauseFunc
	canceled bool
	cause    error
}

// real returns the real context, making it on first use. Once made it is
// read without the lock: a handler (grpc-go's) asks its context for
// values dozens of times a request.
func (c *reqContext) real() context.Context {
	if p := c.made.Load(); p != nil {
		return *p
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.inner == nil {
		c.inner, c.cancelFn = context.WithCancelCause(c.parent)
		if c.canceled {
			c.cancelFn(c.cause)
		}
		c.made.Store(&c.inner)
	}
	return c.inner
}

// cancel cancels the context with cause (nil: context.Canceled); the first
// call's cause stands, as with context.CancelCauseFunc.
func (c *reqContext) cancel(cause error) {
	c.mu.Lock()
	if c.canceled {
		c.mu.Unlock()
		return
	}
	c.canceled, c.cause = true, cause
	fn := c.cancelFn
	c.mu.Unlock()
	if fn != nil {
		fn(cause)
	}
}

func (c *reqContext) Deadline() (time.Time, bool) { return c.parent.Deadline() }
func (c *reqContext) Done() <-chan struct{}       { return c.real().Done() }
func (c *reqContext) Value(key any) any           { return c.real().Value(key) }
func (c *reqContext) String() string              { return "httpserver request context" }

// Err answers without making the real context: cancelled here, or
// whatever the parent says.
func (c *reqContext) Err() error {
	c.mu.Lock()
	inner, canceled := c.inner, c.canceled
	c.mu.Unlock()
	switch {
	case inner != nil:
		return inner.Err()
	case canceled:
		return context.Canceled
	}
	return c.parent.Err()
}
