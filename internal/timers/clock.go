package timers

import (
	"math"
	"time"
)

// origin is the fixed process origin of Now. time.Since on a time.Time that
// carries a monotonic reading uses only the monotonic clock, so Now never
// jumps with wall-clock changes.
var origin = time.Now()

// Now returns monotonic nanoseconds since a fixed origin taken when the
// package was initialised. Deadlines are expressed on this scale so that they
// are immune to wall-clock changes (Netty's ScheduledFutureTask.nanoTime).
func Now() int64 { return int64(time.Since(origin)) }

// Never is the saturated deadline: a timer armed for Never does not fire
// before the end of time.
const Never int64 = math.MaxInt64

// DeadlineAfter returns now+d, saturating at Never instead of overflowing
// (Netty's deadlineNanos guard); d <= 0 yields now, so the timer is due at
// once.
func DeadlineAfter(now int64, d time.Duration) int64 {
	if d <= 0 {
		return now
	}
	if now > math.MaxInt64-int64(d) {
		return Never
	}
	return now + int64(d)
}
