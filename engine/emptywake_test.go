package engine_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ringloop/ringloop/internal/testenv"
	"github.com/ringloop/ringloop/tasks"
)

// TestTimerWaitsAreNotPrematureWakeups: timers due at sub- and fractional
// millisecond delays, each armed by the one before on the loop, make the
// loop sleep to every deadline. Under every profile (epoll without
// epoll_pwait2 rounds timeouts up to whole milliseconds) no such wait counts
// as an empty wake-up: only a producer's wake that lands after the loop woke
// for another reason can, so there are at most as many as wakes.
func TestTimerWaitsAreNotPrematureWakeups(t *testing.T) {
	delays := []time.Duration{300 * time.Microsecond, 1300 * time.Microsecond,
		50 * time.Microsecond, 2100 * time.Microsecond, 999 * time.Microsecond}
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		l := newLoop(t, c)
		done := make(chan struct{})
		left := 4 * len(delays)
		var next func()
		next = func() {
			if left--; left < 0 {
				close(done)
				return
			}
			_, err := l.Schedule(tasks.Func(next), delays[left%len(delays)])
			require.NoError(t, err)
		}
		require.NoError(t, l.Execute(tasks.Func(next)))
		select {
		case <-done:
		case <-time.After(time.Minute):
			t.Fatal("the timer chain did not finish")
		}
		m := l.Metrics()
		require.LessOrEqual(t, m.EmptyWakeups, m.Wakes, "waits that ended at their deadline counted as premature")
	})
}
