package tasks

import (
	"context"
	"errors"
	"fmt"
)

// Sentinel errors, for errors.Is.
var (
	// ErrRejected says a full queue rejected the task (after the reject
	// policy's retries, if any).
	ErrRejected = errors.New("tasks: task rejected: queue full")
	// ErrShutdown says the executor is shutting down or shut down and takes
	// no more tasks.
	ErrShutdown = errors.New("tasks: executor shut down")
	// ErrDeadlock is returned by Await called on the promise's own event
	// loop before the promise is done: the loop would wait for itself
	// (Netty's BlockingOperationException).
	ErrDeadlock = errors.New("tasks: Await on the promise's own event loop would deadlock")
	// ErrCancelled is the error of a cancelled future. It wraps
	// context.Canceled, so errors.Is(err, context.Canceled) holds too.
	ErrCancelled = fmt.Errorf("tasks: future cancelled: %w", context.Canceled)
)
