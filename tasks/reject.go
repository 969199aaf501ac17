package tasks

import (
	"fmt"
	"runtime"
	"time"
)

// RejectPolicy decides what happens to a task a full queue refused (Netty's
// RejectedExecutionHandler). Policies are pluggable: implement the interface
// or use RejectFunc.
type RejectPolicy interface {
	// Rejected is called after q.Offer(t) returned false. It may retry and
	// returns nil once the task was enqueued, or an error wrapping
	// ErrRejected. wake asks the consumer to drain (it may be nil);
	// onConsumer is true when called on the consumer's goroutine, which then
	// must not wait, since only it can make room.
	Rejected(q Queue, t Task, wake func(), onConsumer bool) error
}

// RejectFunc adapts a function to RejectPolicy.
type RejectFunc func(q Queue, t Task, wake func(), onConsumer bool) error

// Rejected calls f.
func (f RejectFunc) Rejected(q Queue, t Task, wake func(), onConsumer bool) error {
	return f(q, t, wake, onConsumer)
}

// Reject returns the default policy (Netty's RejectedExecutionHandlers.reject):
// fail at once with ErrRejected.
func Reject() RejectPolicy { return rejectPolicy{} }

type rejectPolicy struct{}

func (rejectPolicy) Rejected(Queue, Task, func(), bool) error { return ErrRejected }

// Backoff returns Netty's RejectedExecutionHandlers.backoff: off the consumer,
// up to retries times, wake the consumer, sleep d and offer again; on the
// consumer, or when every retry failed, reject with ErrRejected. d == 0
// yields the processor instead of sleeping. It panics if retries < 1 or
// d < 0, as Netty does for a non-positive retry count.
func Backoff(retries int, d time.Duration) RejectPolicy {
	if retries < 1 {
		panic(fmt.Sprintf("tasks: Backoff retries must be positive, got %d", retries))
	}
	if d < 0 {
		panic(fmt.Sprintf("tasks: Backoff delay must not be negative, got %v", d))
	}
	return backoff{retries: retries, d: d}
}

type backoff struct {
	retries int
	d       time.Duration
}

func (b backoff) Rejected(q Queue, t Task, wake func(), onConsumer bool) error {
	if onConsumer {
		// Waiting here would block the only goroutine that can make room.
		return fmt.Errorf("%w (on the consumer, no backoff)", ErrRejected)
	}
	for range b.retries {
		if wake != nil {
			wake()
		}
		pause(b.d)
		if q.Offer(t) {
			return nil
		}
	}
	return fmt.Errorf("%w after %d retries", ErrRejected, b.retries)
}

// Enqueue offers t to q and, when q is full, hands it to policy (nil means
// Reject). It returns nil once t is queued, else the policy's error.
func Enqueue(q Queue, t Task, policy RejectPolicy, wake func(), onConsumer bool) error {
	if q.Offer(t) {
		return nil
	}
	if policy == nil {
		return ErrRejected
	}
	return policy.Rejected(q, t, wake, onConsumer)
}

// pause sleeps d, or yields the processor when d is 0.
func pause(d time.Duration) {
	if d <= 0 {
		runtime.Gosched()
		return
	}
	time.Sleep(d)
}
