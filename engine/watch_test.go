package engine_test

import (
	"encoding/binary"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/internal/testenv"
	"github.com/ringloop/ringloop/tasks"
)

// counter is an eventfd-backed FDHandler.
type counter struct {
	fd      int
	ready   atomic.Int64
	total   atomic.Uint64
	unreg   chan error
	onReady func()
}

func (c *counter) OnReady(w *engine.Watch, ev uint32) {
	var b [8]byte
	if n, err := unix.Read(c.fd, b[:]); err == nil && n == 8 {
		c.total.Add(binary.LittleEndian.Uint64(b[:]))
	}
	c.ready.Add(1)
	if c.onReady != nil {
		c.onReady()
	}
}

func (c *counter) OnUnregistered(w *engine.Watch, err error) { c.unreg <- err }

func newEventfd(t *testing.T) int {
	fd, err := unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
	require.NoError(t, err)
	t.Cleanup(func() { unix.Close(fd) })
	return fd
}

func bump(t *testing.T, fd int) {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], 1)
	_, err := unix.Write(fd, b[:])
	require.NoError(t, err)
}

func TestRegisterFD(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		l, err := engine.New(c.Options()...)
		require.NoError(t, err)
		fd := newEventfd(t)
		h := &counter{fd: fd, unreg: make(chan error, 1)}
		_, err = l.RegisterFD(fd, 0, h)
		require.ErrorContains(t, err, "want an fd, events and a handler")
		w, err := l.RegisterFD(fd, unix.POLLIN, h)
		require.NoError(t, err)
		for i := 1; i <= 5; i++ {
			bump(t, fd)
			testenv.Eventually(t, 5*time.Second, "readiness", func() bool { return h.total.Load() == uint64(i) })
		}
		require.NoError(t, w.Stop())
		select {
		case err := <-h.unreg:
			require.NoError(t, err)
		case <-time.After(5 * time.Second):
			t.Fatal("OnUnregistered not called after Stop")
		}
		bump(t, fd)
		require.NoError(t, l.Close())
		require.EqualValues(t, 5, h.total.Load(), "no readiness after Stop")
	})
}

func TestRegisterFDUnregisteredAtShutdown(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		l, err := engine.New(c.Options()...)
		require.NoError(t, err)
		fd := newEventfd(t)
		h := &counter{fd: fd, unreg: make(chan error, 1)}
		_, err = l.RegisterFD(fd, unix.POLLIN, h)
		require.NoError(t, err)
		require.NoError(t, l.Close())
		select {
		case err := <-h.unreg:
			require.NoError(t, err)
		default:
			t.Fatal("a watch outlived its loop")
		}
	})
}

// TestIORatio checks the task budget iteration by iteration under a clock
// that only the test moves: each I/O completion advances it by ioCost and
// each task by taskCost, so an iteration whose I/O took io must run exactly
// io*(100-ratio)/ratio worth of tasks (whole batches of TaskBatch, the least
// one batch). Tasks re-queue themselves, so the ring never runs dry, and
// each iteration's tasks write the eventfd once, so the next iteration has
// one completion (or none yet, then one batch of tasks). An ignored ratio
// (every queued task in one iteration) or a zero budget (one batch each
// time) fails.
func TestIORatio(t *testing.T) {
	const taskCost = 100
	const ioCost = 8 * engine.TaskBatch * taskCost // budgets are whole batches at 20, 50, 80
	const queued, ioIters = 4096, 30
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		for _, ratio := range []int{20, 50, 80} {
			// No spin: on the fake clock an idle gap never grows, so a
			// locked loop would spin until the clock moves.
			l := newLoop(t, c, engine.WithIORatio(ratio), engine.WithSpin(0, false))
			clock, restore := engine.UseFakeClock()
			defer restore()

			// Everything below runs on the loop, so needs no locking.
			type iteration struct {
				io    int64
				tasks int
			}
			iters := map[uint64]*iteration{}
			at := func() (uint64, *iteration) {
				n := l.Metrics().Iterations
				it := iters[n]
				if it == nil {
					it = &iteration{}
					iters[n] = it
				}
				return n, it
			}
			fd := newEventfd(t)
			var first, last uint64 // iterations of the first and the ioIters-th completion
			var seen int
			written, stop := false, false
			h := &counter{fd: fd, unreg: make(chan error, 1)}
			h.onReady = func() {
				written = false
				clock.Add(ioCost)
				n, it := at()
				it.io += ioCost
				if seen++; seen == 1 {
					first = n
				} else if seen == ioIters {
					last, stop = n, true
				}
			}
			_, err := l.RegisterFD(fd, unix.POLLIN, h)
			require.NoError(t, err)

			done := make(chan struct{})
			left := queued
			var task func()
			task = func() {
				clock.Add(taskCost)
				_, it := at()
				it.tasks++
				if !written && !stop {
					written = true
					bump(t, fd)
				}
				if !stop {
					require.NoError(t, l.Execute(tasks.Func(task)))
				} else if left--; left == 0 {
					close(done)
				}
			}
			block := busy(t, l) // queue everything before any of it runs
			for range queued {
				require.NoError(t, l.Execute(tasks.Func(task)))
			}
			close(block)
			select {
			case <-done:
			case <-time.After(time.Minute):
				t.Fatal("the tasks did not finish")
			}
			restore()

			want := func(io int64) int {
				budget := io * int64(100-ratio) / int64(ratio)
				return engine.TaskBatch * max(1, int(budget/(engine.TaskBatch*taskCost)))
			}
			checked := 0
			for n := first; n < last; n++ {
				it := iters[n]
				require.NotNil(t, it, "iteration %d ran no task", n)
				require.Equal(t, want(it.io), it.tasks,
					"ioRatio %d: iteration %d had %v of I/O (want tasks for %v)", ratio, n, time.Duration(it.io), time.Duration(it.io*int64(100-ratio)/int64(ratio)))
				if it.io > 0 {
					checked++
				}
			}
			require.GreaterOrEqual(t, checked, ioIters-1, "iterations with I/O checked")
		}
	})
}

func TestIORatio100RunsAllTasks(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		l := newLoop(t, c, engine.WithIORatio(100))
		block := busy(t, l)
		for range 10000 {
			require.NoError(t, l.Execute(tasks.Func(func() {})))
		}
		m0 := l.Metrics()
		close(block)
		testenv.Eventually(t, 5*time.Second, "drained", func() bool { return l.Metrics().TasksRun >= 10001 })
		m := l.Metrics()
		// Polls a locked loop spins after the work (WithSpin) are
		// iterations that ran nothing.
		require.LessOrEqual(t, m.Iterations-m0.Iterations-(m.Spins-m0.Spins), uint64(2), "ioRatio 100 runs every queued task in one go")
	})
}

type panicky struct{ unreg chan error }

func (p *panicky) OnReady(w *engine.Watch, ev uint32)        { panic("ready blew up") }
func (p *panicky) OnUnregistered(w *engine.Watch, err error) { p.unreg <- err }

func TestRegisterFDHandlerPanicEndsWatch(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		l := newLoop(t, c, engine.WithLogger(discardLogger()))
		fd := newEventfd(t)
		h := &panicky{unreg: make(chan error, 1)}
		_, err := l.RegisterFD(fd, unix.POLLIN, h)
		require.NoError(t, err)
		bump(t, fd)
		select {
		case err := <-h.unreg:
			require.ErrorIs(t, err, tasks.ErrPanicked)
		case <-time.After(5 * time.Second):
			t.Fatal("a panicking fd handler was not unregistered")
		}
		require.EqualValues(t, 1, l.Metrics().Panics)
	})
}
