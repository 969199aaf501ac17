package tasks

import (
	"fmt"
	"runtime"
	"time"
)

// RejectPolicy decides what happens to a task a full task ring refused
// (Netty's RejectedExecutionHandler): Reject, Backoff, or a policy of your
// own.
type RejectPolicy interface {
	// Rejected is called after the ring refused a task. It may call retry,
	// which offers the task again and reports whether the ring took it, and
	// returns nil once it did, or an error wrapping ErrRejected. wake asks
	// the loop to drain its ring; onConsumer is true when called on the
	// loop itself, which then must not wait, since only it can make room.
	Rejected(retry func() bool, wake func(), onConsumer bool) error
}

// Reject returns the default policy (Netty's RejectedExecutionHandlers.reject):
// fail at once with ErrRejected.
func Reject() RejectPolicy { return rejectPolicy{} }

type rejectPolicy struct{}

func (rejectPolicy) Rejected(func() bool, func(), bool) error { return ErrRejected }

// Backoff returns Netty's RejectedExecutionHandlers.backoff: off the loop, up
// to retries times, wake the loop, sleep d and offer again; on the loop, or
// when every retry failed, reject with ErrRejected. d == 0
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

func (b backoff) Rejected(retry func() bool, wake func(), onConsumer bool) error {
	if onConsumer {
		// Waiting here would block the only goroutine that can make room.
		return fmt.Errorf("%w (on the loop, no backoff)", ErrRejected)
	}
	for range b.retries {
		if wake != nil {
			wake()
		}
		pause(b.d)
		if retry() {
			return nil
		}
	}
	return fmt.Errorf("%w after %d retries", ErrRejected, b.retries)
}

// pause sleeps d, or yields the processor when d is 0.
func pause(d time.Duration) {
	if d <= 0 {
		runtime.Gosched()
		return
	}
	time.Sleep(d)
}
