package engine

import (
	"context"
	"errors"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ringloop/ringloop/internal/driver"
	"github.com/ringloop/ringloop/internal/epoll"
	"github.com/ringloop/ringloop/tasks"
)

// flakyDriver wraps a real driver: its blocking waits return at once with
// nothing (as a buggy epoll would) while spurious > 0, and Enable fails while
// failEnable is set.
type flakyDriver struct {
	driver.Driver
	spurious   atomic.Int64
	failEnable atomic.Bool
	blocked    atomic.Bool // inside a blocking Wait
	// beforeEnable, when set, runs first in Enable (on the loop goroutine).
	beforeEnable func()
}

func (f *flakyDriver) Wait(timeout time.Duration, fn func(*driver.Completion)) (int, error) {
	if timeout != 0 && f.spurious.Load() > 0 {
		f.spurious.Add(-1)
		return f.Driver.Wait(0, fn)
	}
	if timeout == 0 {
		return f.Driver.Wait(timeout, fn)
	}
	f.blocked.Store(true)
	defer f.blocked.Store(false)
	return f.Driver.Wait(timeout, fn)
}

func (f *flakyDriver) Enable() error {
	if f.beforeEnable != nil {
		f.beforeEnable()
	}
	if f.failEnable.Load() {
		return errors.New("enable refused")
	}
	return nil
}

func newFlaky(t *testing.T, opts ...Option) (*Loop, *flakyDriver) {
	t.Helper()
	f := &flakyDriver{}
	inject := func(c *config) error {
		c.newDriver = func(dc driver.Config) (driver.Driver, error) {
			d, err := epoll.New(dc)
			f.Driver = d
			return f, err
		}
		return nil
	}
	l, err := New(append(opts, inject)...)
	require.NoError(t, err)
	t.Cleanup(func() { _ = l.Close() })
	return l, f
}

// TestEmptyWakeupsAreCounted: premature empty returns are counted for
// diagnosis, and the loop goes on serving.
func TestEmptyWakeupsAreCounted(t *testing.T) {
	l, f := newFlaky(t)
	// Start the loop first, so that no late wake-up from the start races
	// the premature returns below.
	_, err := Submit(l, func() (struct{}, error) { return struct{}{}, nil }).Await(context.Background())
	require.NoError(t, err)
	f.spurious.Store(64 + 10)
	require.NoError(t, l.Execute(tasks.Func(func() {}))) // wake the loop into them
	deadline := time.Now().Add(5 * time.Second)
	for f.spurious.Load() > 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	_, err = Submit(l, func() (struct{}, error) { return struct{}{}, nil }).Await(context.Background())
	require.NoError(t, err)
	require.GreaterOrEqual(t, l.Metrics().EmptyWakeups, uint64(64))
}

// TestProducerWakeupsAreNotEmpty: a wake-up by a producer is not premature.
// Each task is submitted once the loop is inside a blocking wait: a task
// that lands while the loop is still awake (after its last check of the
// rings, before it blocks) may leave one wake-up that finds nothing, which
// the package doc allows; this test is about the wake that brings work.
func TestProducerWakeupsAreNotEmpty(t *testing.T) {
	l, f := newFlaky(t)
	// Wake-ups by producers are not premature: 100 tasks, one at a time.
	for i := range 100 {
		deadline := time.Now().Add(30 * time.Second)
		for i > 0 && !f.blocked.Load() { // the first task starts the loop
			require.True(t, time.Now().Before(deadline), "the loop never blocked")
			runtime.Gosched()
		}
		_, err := Submit(l, func() (struct{}, error) { return struct{}{}, nil }).Await(context.Background())
		require.NoError(t, err)
	}
	require.Zero(t, l.Metrics().EmptyWakeups)
}

func TestFailedStartRollsBack(t *testing.T) {
	l, f := newFlaky(t)
	f.failEnable.Store(true)
	err := l.Execute(tasks.Func(func() {}))
	require.ErrorContains(t, err, "enable refused")
	require.Equal(t, NotStarted, l.State())
	f.failEnable.Store(false)
	_, err = Submit(l, func() (struct{}, error) { return struct{}{}, nil }).Await(context.Background())
	require.NoError(t, err, "the queued task and the new one run once a start succeeds")
	require.Equal(t, Started, l.State())
}

// TestFailedStartRacingShutdownTerminates: a ShutdownGracefully that comes
// while a start is failing (it sees the loop started) still ends with a
// terminated loop.
func TestFailedStartRacingShutdownTerminates(t *testing.T) {
	l, f := newFlaky(t)
	entered, release := make(chan struct{}), make(chan struct{})
	f.failEnable.Store(true)
	f.beforeEnable = func() { close(entered); <-release }
	errc := make(chan error, 1)
	go func() { errc <- l.Execute(tasks.Func(func() {})) }()
	<-entered
	require.NoError(t, l.ShutdownGracefully(0, time.Second))
	close(release)
	require.ErrorContains(t, <-errc, "enable refused")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, l.Shutdown(ctx), "the loop never terminated")
	require.Equal(t, Terminated, l.State())
	require.ErrorIs(t, l.Execute(tasks.Func(func() {})), ErrShutdown)
}

func TestTagsRoundTrip(t *testing.T) {
	for _, c := range []struct {
		idx, gen uint32
		k        driver.OpKind
	}{{0, 0, 1}, {1<<32 - 1, tagGenMask, 0x7f}, {12345, 678, 3}} {
		tag := makeTag(c.idx, c.gen, c.k)
		require.Zero(t, tag&driver.Reserved, "engine tags never use the driver's bit")
		i, g, k := splitTag(tag)
		require.Equal(t, c.idx, i)
		require.Equal(t, c.gen, g)
		require.Equal(t, c.k, k)
	}
}

func TestRegistryStaleGeneration(t *testing.T) {
	var g registry
	w := &Watch{}
	idx, gen := g.add(w)
	tag := makeTag(idx, gen, driver.OpPoll)
	r, _ := g.lookup(tag)
	require.Same(t, w, r)
	g.remove(idx, gen)
	w2 := &Watch{}
	idx2, gen2 := g.add(w2)
	require.Equal(t, idx, idx2, "slots are reused")
	require.NotEqual(t, gen, gen2)
	r, _ = g.lookup(tag)
	require.Nil(t, r, "a stale tag never reaches the slot's new owner")
}
