package engine_test

import (
	"encoding/binary"
	"math"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/internal/testenv"
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
		require.ErrorIs(t, err, engine.ErrInvalidEvents)
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
		requireDone(t, l.ShutdownGracefully(0, time.Second))
		select {
		case err := <-h.unreg:
			require.NoError(t, err)
		default:
			t.Fatal("a watch outlived its loop")
		}
	})
}

// TestIORatio floods the loop with tasks while an eventfd keeps it busy with
// I/O, and checks the task/I-O time split follows the ratio.
func TestIORatio(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		for _, ratio := range []int{20, 50, 80} {
			l, err := engine.New(c.Options(engine.WithIORatio(ratio))...)
			require.NoError(t, err)
			fd := newEventfd(t)
			h := &counter{fd: fd, unreg: make(chan error, 1)}
			h.onReady = func() { spin(2 * time.Millisecond); bump(t, fd) } // I/O never runs dry
			_, err = l.RegisterFD(fd, unix.POLLIN, h)
			require.NoError(t, err)
			stop := make(chan struct{})
			var task func()
			task = func() { // each task spins 0.5µs and queues its successor: the ring never empties
				spin(500 * time.Nanosecond)
				select {
				case <-stop:
				default:
					_ = l.ExecuteFunc(task)
				}
			}
			for range 4096 {
				require.NoError(t, l.ExecuteFunc(task))
			}
			bump(t, fd)
			// Measure over windows of 200 ms. The split is wall time, so a
			// loop thread preempted by other processes mid-batch overshoots
			// its budget; on a shared machine a window may be skewed, so up
			// to five windows are tried and one must match. An ignored ratio
			// (tasks unbounded: the split grows without limit) or a zero
			// budget (64 tasks per iteration: ~0.02) fails every window.
			want := float64(100-ratio) / float64(ratio)
			var got []float64
			ok := false
			m0 := l.Metrics()
			for try := 0; try < 5 && !ok; try++ {
				time.Sleep(200 * time.Millisecond) // the measurement window
				m1 := l.Metrics()
				split := float64(m1.TaskTime-m0.TaskTime) / float64(m1.IOTime-m0.IOTime)
				got = append(got, split)
				ok = math.Abs(split-want) <= want*0.6+0.15
				m0 = m1
			}
			close(stop)
			require.NoError(t, l.Close())
			t.Logf("%s ioRatio %d: task/io per window = %.2f (want %.2f)", c, ratio, got, want)
			require.True(t, ok, "task/io split %.2f does not follow ioRatio %d (want %.2f)", got, ratio, want)
		}
	})
}

func TestIORatio100RunsAllTasks(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		l := newLoop(t, c, engine.WithIORatio(100))
		block := busy(t, l)
		for range 10000 {
			require.NoError(t, l.ExecuteFunc(func() {}))
		}
		it := l.Metrics().Iterations
		close(block)
		testenv.Eventually(t, 5*time.Second, "drained", func() bool { return l.Metrics().TasksRun >= 10001 })
		require.LessOrEqual(t, l.Metrics().Iterations-it, uint64(2), "ioRatio 100 runs every queued task in one go")
	})
}

func spin(d time.Duration) {
	end := time.Now().Add(d)
	for time.Now().Before(end) {
	}
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
			require.ErrorIs(t, err, engine.ErrPanicked)
		case <-time.After(5 * time.Second):
			t.Fatal("a panicking fd handler was not unregistered")
		}
		require.EqualValues(t, 1, l.Metrics().Panics)
	})
}
