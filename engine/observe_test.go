package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/internal/testenv"
	"github.com/ringloop/ringloop/tasks"
)

// jsonLog returns a logger writing JSON records to a buffer the test reads.
func jsonLog() (*slog.Logger, *testenv.SyncBuffer) {
	var buf testenv.SyncBuffer
	return slog.New(slog.NewJSONHandler(&buf, nil)), &buf
}

// records parses the JSON records written to buf.
func records(t *testing.T, buf *testenv.SyncBuffer) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		if line == "" {
			continue
		}
		var r map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &r), "log line %q", line)
		out = append(out, r)
	}
	return out
}

// defaultStall is the stall detector's default threshold (WithStallDetector).
const defaultStall = 250 * time.Millisecond

// TestLoopNames: a loop built without WithName is "loop-<n>", numbered in
// the order the process built them, and that name is its metrics label and
// starts its String; WithName's name replaces it, an empty one is refused.
func TestLoopNames(t *testing.T) {
	a, err := engine.New()
	require.NoError(t, err)
	defer a.Close()
	b, err := engine.New()
	require.NoError(t, err)
	defer b.Close()
	re := regexp.MustCompile(`^loop-(\d+)$`)
	ma, mb := re.FindStringSubmatch(a.Name()), re.FindStringSubmatch(b.Name())
	require.NotNil(t, ma, "default name %q", a.Name())
	require.NotNil(t, mb, "default name %q", b.Name())
	require.Less(t, ma[1], mb[1]+"0", "numbers follow the order of New") // b's number has at least a's digits
	require.NotEqual(t, a.Name(), b.Name())
	require.True(t, strings.HasPrefix(a.String(), a.Name()+"("), a.String())

	n, err := engine.New(engine.WithName("ingest"))
	require.NoError(t, err)
	defer n.Close()
	require.Equal(t, "ingest", n.Name())
	_, err = engine.New(engine.WithName(""))
	require.ErrorContains(t, err, "empty loop name")
}

// blocker blocks its loop in OnData until release closes, as a handler
// waiting for a lock or a synchronous call would, then echoes.
type blocker struct{ release chan struct{} }

func (blocker) OnOpen(*engine.Conn) {}
func (b blocker) OnData(c *engine.Conn, p []byte) {
	<-b.release
	_, _ = c.Write(p)
}
func (blocker) OnClose(*engine.Conn, error) {}

// roundTrip writes p and reads as many bytes back.
func roundTrip(t *testing.T, nc net.Conn, p []byte) {
	t.Helper()
	_ = nc.SetDeadline(time.Now().Add(30 * time.Second))
	_, err := nc.Write(p)
	require.NoError(t, err)
	_, err = io.ReadFull(nc, make([]byte, len(p)))
	require.NoError(t, err)
}

// TestStallDetectorOnByDefault: with no option, a handler that blocks its
// loop is reported while it is blocked, past the default threshold, as one
// warning naming the loop by its name, the callback, the blocking function
// (file and line) and the loop goroutine's stack; the slow completion batch
// it was in is not reported as well. A timer that blocks is reported the
// same way. Nothing here depends on the machine's speed: the handler blocks
// until the report is in the log.
func TestStallDetectorOnByDefault(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		log, buf := jsonLog()
		l := newLoop(t, c, engine.WithLogger(log))
		release := make(chan struct{})
		ln, err := engine.Listen(l, "tcp", "127.0.0.1:0", blocker{release})
		require.NoError(t, err)
		defer ln.Close()
		nc, err := net.DialTimeout("tcp", ln.Addr().String(), 10*time.Second)
		require.NoError(t, err)
		defer nc.Close()
		_, err = nc.Write([]byte("x"))
		require.NoError(t, err)
		testenv.Eventually(t, 30*time.Second, "the stall's log record", func() bool { return strings.Contains(buf.String(), "stall") })
		close(release)
		_ = nc.SetDeadline(time.Now().Add(30 * time.Second))
		_, err = io.ReadFull(nc, make([]byte, 1))
		require.NoError(t, err)
		roundTrip(t, nc, []byte("y")) // a later batch: the blocked one ended, unreported

		rs := records(t, buf)
		require.Len(t, rs, 1, "one stall, one record: %s", buf.String())
		r := rs[0]
		require.Equal(t, "WARN", r["level"])
		require.Equal(t, l.Name(), r["loop"])
		require.Regexp(t, `^loop-\d+$`, r["loop"])
		require.Equal(t, "callback", r["what"])
		require.Regexp(t, `^github\.com/ringloop/ringloop/engine_test\.blocker\.OnData \(.*/engine/observe_test\.go:\d+\)$`, r["detail"])
		took, ok := r["took"].(float64) // slog's JSON handler writes a Duration as nanoseconds
		require.True(t, ok, "took: %v", r["took"])
		require.GreaterOrEqual(t, time.Duration(took), defaultStall)
		stack, ok := r["stack"].([]any)
		require.True(t, ok, "stack: %T", r["stack"])
		require.Contains(t, fmt.Sprint(stack), "engine.(*Conn).onData")

		timerRelease := make(chan struct{})
		_, err = l.Schedule(tasks.Func(func() { blockingTimer(timerRelease) }), time.Millisecond)
		require.NoError(t, err)
		testenv.Eventually(t, 30*time.Second, "the timer's stall record", func() bool { return strings.Count(buf.String(), "stall") == 2 })
		close(timerRelease)
		r = records(t, buf)[1]
		require.Equal(t, "timer", r["what"])
		require.Contains(t, r["detail"], "engine_test.blockingTimer")
		require.Equal(t, l.Name(), r["loop"])
	})
}

func blockingTimer(release chan struct{}) { <-release }

// TestStallDetectorQuietOnHealthyLoop: at the default threshold a loop
// serving 8 connections that echo 2,000 messages each, from the same
// process, logs nothing; and WithStallDetector(0, nil) turns it off (a task
// that sleeps past the threshold is not reported). The first part is the
// claim the default rests on: it must hold on a loaded machine under -race.
func TestStallDetectorQuietOnHealthyLoop(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		log, buf := jsonLog()
		l := newLoop(t, c, engine.WithLogger(log))
		ln, err := engine.Listen(l, "tcp", "127.0.0.1:0", echoConn{})
		require.NoError(t, err)
		defer ln.Close()
		var wg sync.WaitGroup
		errs := make(chan error, 8)
		for range 8 {
			wg.Go(func() {
				nc, err := net.DialTimeout("tcp", ln.Addr().String(), 10*time.Second)
				if err != nil {
					errs <- err
					return
				}
				defer nc.Close()
				_ = nc.SetDeadline(time.Now().Add(60 * time.Second))
				msg := make([]byte, 512)
				for range 2000 {
					if _, err := nc.Write(msg); err != nil {
						errs <- err
						return
					}
					if _, err := io.ReadFull(nc, msg); err != nil {
						errs <- err
						return
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			require.NoError(t, err)
		}
		_, err = engine.Submit(l, func() (struct{}, error) { return struct{}{}, nil }).Await(context.Background())
		require.NoError(t, err)
		require.Empty(t, buf.String(), "a healthy loop logged")
		t.Logf("%s: longest completion batch %v", c, l.Metrics().Longest)

		log2, buf2 := jsonLog()
		off := newLoop(t, c, engine.WithLogger(log2), engine.WithStallDetector(0, nil))
		_, err = engine.Submit(off, func() (struct{}, error) {
			time.Sleep(defaultStall + 50*time.Millisecond)
			return struct{}{}, nil
		}).Await(context.Background())
		require.NoError(t, err)
		_, err = engine.Submit(off, func() (struct{}, error) { return struct{}{}, nil }).Await(context.Background())
		require.NoError(t, err)
		require.Empty(t, buf2.String(), "a detector turned off reported")

		_, err = engine.New(engine.WithStallDetector(-time.Second, nil))
		require.ErrorContains(t, err, "stall threshold -1s")
	})
}

// TestPanicLogReadable: a task's panic is logged as one record with the
// loop's name, "at" the line that panicked (not the recovery's) and the
// stack as a list of frames, none of them with a newline.
func TestPanicLogReadable(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		log, buf := jsonLog()
		l := newLoop(t, c, engine.WithLogger(log))
		require.NoError(t, l.Execute(tasks.Func(panicsBoom)))
		_, err := engine.Submit(l, func() (struct{}, error) { return struct{}{}, nil }).Await(context.Background())
		require.NoError(t, err)
		rs := records(t, buf)
		require.Len(t, rs, 1, buf.String())
		r := rs[0]
		require.Equal(t, "ERROR", r["level"])
		require.Equal(t, l.Name(), r["loop"])
		require.Equal(t, "boom", r["panic"])
		require.Regexp(t, `^github\.com/ringloop/ringloop/engine_test\.panicsBoom \(.*/engine/observe_test\.go:\d+\)$`, r["at"])
		stack, ok := r["stack"].([]any)
		require.True(t, ok, "stack is a list: %T", r["stack"])
		require.Greater(t, len(stack), 1)
		require.Equal(t, r["at"], stack[0])
		for _, f := range stack {
			require.NotContains(t, f, "\n")
			require.NotContains(t, f, "runtime.gopanic")
		}
	})
}

func panicsBoom() { panic("boom") }
