package tests

import (
	"io"
	"log/slog"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/internal/testenv"
	"github.com/ringloop/ringloop/tasks"
)

// readExactly reads len(want) bytes from peer within lifeWait and checks
// them.
func readExactly(t *testing.T, peer io.Reader, want string) {
	t.Helper()
	got := make([]byte, len(want))
	_, err := io.ReadFull(peer, got)
	require.NoError(t, err)
	require.Equal(t, want, string(got))
}

// TestWorkFromHandlersWhileParked: what a handler starts runs on time after
// the loop goes back to sleep, here a timer, then a task from another
// goroutine. A parked loop runs its next iterations inside the wait it woke
// from (driver.Resumer), so the timer's deadline must reach that wait, which
// began with none, and a wake must end it.
func TestWorkFromHandlersWhileParked(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		l := newLoop(t, c)
		r := newRecorder()
		r.onData = func(conn *engine.Conn, b []byte) {
			if string(b) != "go" {
				return
			}
			// A timer set on the loop wakes nobody: the loop's next wait
			// must take its deadline.
			_, _ = conn.Write([]byte("data;"))
			_, err := l.Schedule(tasks.Func(func() { _, _ = conn.Write([]byte("timer;")) }), 30*time.Millisecond)
			require.NoError(t, err)
		}
		_, peer := acceptOne(t, l, r)
		conn := recv(t, r.opened, "OnOpen")
		require.NoError(t, peer.SetReadDeadline(time.Now().Add(lifeWait)))
		// Rounds after the first find the loop asleep, not spinning.
		for range 3 {
			_, err := peer.Write([]byte("go"))
			require.NoError(t, err)
			readExactly(t, peer, "data;timer;")
		}
		// The loop sleeps again, with nothing scheduled: a task from another
		// goroutine wakes it.
		require.NoError(t, l.Execute(tasks.Func(func() { _, _ = conn.Write([]byte("from outside;")) })))
		readExactly(t, peer, "from outside;")
	})
}

// TestHandlerTaskGoexitLoopGoesOn: a task a handler queued runs between two
// waits of a parked loop, inside the first (driver.Resumer); a Goexit there
// is a task's Goexit: the loop goes on serving and closes cleanly.
func TestHandlerTaskGoexitLoopGoesOn(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		logs := &logCapture{}
		l := newLoop(t, c, engine.WithLogger(slog.New(logs)))
		r := newRecorder()
		r.onData = func(conn *engine.Conn, b []byte) {
			if string(b) == "exit" {
				require.NoError(t, l.Execute(tasks.Func(runtime.Goexit)))
			}
			_, _ = conn.Write(b)
		}
		_, peer := acceptOne(t, l, r)
		recv(t, r.opened, "OnOpen")
		require.NoError(t, peer.SetReadDeadline(time.Now().Add(lifeWait)))
		for _, msg := range []string{"exit", "after", "exit", "again"} {
			_, err := peer.Write([]byte(msg))
			require.NoError(t, err)
			readExactly(t, peer, msg)
		}
		testenv.Eventually(t, lifeWait, "both Goexits counted", func() bool { return l.Metrics().Panics == 2 })
		require.Equal(t, 2, countLines(logs, "a task called runtime.Goexit; the loop goes on"))
		require.Equal(t, engine.Started, l.State())
	})
}

// TestLoopNeedsNoWakeFromItself: a task a handler queues runs once the
// handler returns, with no wake-up of the loop's driver (which would cost it
// a deadline and the park an extra round): only other goroutines' tasks
// wake a loop, as in Netty.
func TestLoopNeedsNoWakeFromItself(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		l := newLoop(t, c)
		r := newRecorder()
		r.onData = func(conn *engine.Conn, b []byte) {
			msg := append([]byte(nil), b...)
			require.NoError(t, l.Execute(tasks.Func(func() { _, _ = conn.Write(msg) })))
		}
		_, peer := acceptOne(t, l, r)
		recv(t, r.opened, "OnOpen")
		require.NoError(t, peer.SetReadDeadline(time.Now().Add(lifeWait)))
		start := l.Metrics().Wakes
		for i := range 50 {
			msg := string(rune('a' + i%26))
			_, err := peer.Write([]byte(msg))
			require.NoError(t, err)
			readExactly(t, peer, msg)
		}
		require.Equal(t, start, l.Metrics().Wakes, "tasks the loop queued for itself woke it")
	})
}
