package loopgroup_test

import (
	"errors"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/internal/testenv"
	"github.com/ringloop/ringloop/loopgroup"
)

func newExecGroup(t *testing.T, opts ...loopgroup.Option) *loopgroup.Group {
	t.Helper()
	ex, err := loopgroup.NewExecutorGroup(opts...)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, ex.Close()) })
	return ex
}

// TestExecutorGroupIsEpoll: the blocking executor group runs epoll loops,
// whatever backend is asked for, sized 2 x GOMAXPROCS by default.
func TestExecutorGroupIsEpoll(t *testing.T) {
	testenv.CheckLeaks(t)
	ex := newExecGroup(t, loopgroup.WithBackend(engine.BackendUring))
	assert.Equal(t, 2*loopgroup.DefaultLoops(), ex.Len())
	for _, l := range ex.All() {
		assert.Equal(t, "epoll", l.Backend().Name)
	}
	ex2 := newExecGroup(t, loopgroup.WithLoops(3))
	assert.Equal(t, 3, ex2.Len())
	_, err := loopgroup.NewExecutorGroup(loopgroup.WithLoops(-1))
	assert.Error(t, err)
}

// slowHandler serves one-byte requests: 's' sleeps (on the executor group,
// or inline on the I/O loop when inline is set) and answers 'S'; anything
// else is echoed at once.
type slowHandler struct {
	ex     loopgroup.Executor
	inline bool
	sleep  time.Duration
}

func (h *slowHandler) OnOpen(c *engine.Conn) {}
func (h *slowHandler) OnData(c *engine.Conn, b []byte) {
	for _, r := range b {
		if r != 's' {
			_, _ = c.Write([]byte{r})
			continue
		}
		if h.inline {
			time.Sleep(h.sleep) // what a blocking handler must never do
			_, _ = c.Write([]byte("S"))
			continue
		}
		err := loopgroup.Offload(h.ex, c, func() (string, error) {
			time.Sleep(h.sleep) // a database call, say
			return "S", nil
		}, func(c *engine.Conn, v string, err error) {
			if err == nil {
				_, _ = c.Write([]byte(v))
			}
		})
		if err != nil {
			c.Abort()
		}
	}
}
func (h *slowHandler) OnClose(c *engine.Conn, err error) {}

// pingLatency sends n one-byte pings on nc and returns the worst round trip.
func pingLatency(t *testing.T, nc net.Conn, n int, gap time.Duration) time.Duration {
	t.Helper()
	var worst time.Duration
	b := make([]byte, 1)
	for range n {
		start := time.Now()
		_, err := nc.Write([]byte("p"))
		require.NoError(t, err)
		_, err = io.ReadFull(nc, b)
		require.NoError(t, err)
		worst = max(worst, time.Since(start))
		time.Sleep(gap)
	}
	return worst
}

// TestBlockingWorkNeverStallsIOLoop: two connections ask for 400 ms of
// blocking work each while a third pings the same (single) I/O loop. With
// the work on the executor group, the pings keep their round trip far under
// the sleep; the control run, sleeping inline on the I/O loop, shows the
// stall the measurement is able to see.
func TestBlockingWorkNeverStallsIOLoop(t *testing.T) {
	const sleep = 400 * time.Millisecond
	testenv.ForEachBackend(t, func(t *testing.T, c testenv.Combo) {
		for _, inline := range []bool{false, true} {
			name := "offloaded"
			if inline {
				name = "inline-control"
			}
			t.Run(name, func(t *testing.T) {
				testenv.CheckLeaks(t)
				io1 := newGroup(t, c, loopgroup.WithLoops(1))
				ex := newExecGroup(t, loopgroup.WithLoops(2))
				s, err := io1.Serve("tcp", "127.0.0.1:0", &slowHandler{ex: ex, inline: inline, sleep: sleep})
				require.NoError(t, err)
				defer shutdownServer(t, s)
				addr := s.Addr().String()
				pinger := echoOnce(t, addr, 0) // connected and warm
				defer pinger.Close()

				var wg sync.WaitGroup
				slowDone := make(chan time.Duration, 2)
				for range 2 {
					nc := echoOnce(t, addr, 1)
					defer nc.Close()
					wg.Add(1)
					go func() {
						defer wg.Done()
						start := time.Now()
						_, err := nc.Write([]byte("s"))
						require.NoError(t, err)
						b := make([]byte, 1)
						_, err = io.ReadFull(nc, b)
						require.NoError(t, err)
						assert.Equal(t, "S", string(b))
						slowDone <- time.Since(start)
					}()
				}
				time.Sleep(20 * time.Millisecond) // let the slow requests land first
				worst := pingLatency(t, pinger, 10, 20*time.Millisecond)
				wg.Wait()
				close(slowDone)
				for d := range slowDone {
					assert.GreaterOrEqual(t, d, sleep)
				}
				if inline {
					assert.Greater(t, worst, sleep/2, "the control must see the loop stall")
				} else {
					assert.Less(t, worst, sleep/4, "a ping waited on blocking work")
				}
				t.Logf("worst ping round trip %v", worst)
			})
		}
	})
}

// TestOffloadKeepsOrder: with the connection pinned to one executor loop
// (chosen in OnOpen), replies come back in request order even though each
// request takes a different time, whether the answer goes back through
// Offload's continuation or by Conn.AsyncWrite from the executor loop.
func TestOffloadKeepsOrder(t *testing.T) {
	testenv.ForEachBackend(t, func(t *testing.T, c testenv.Combo) {
		for _, async := range []bool{false, true} {
			t.Run(map[bool]string{false: "offload", true: "asyncwrite"}[async], func(t *testing.T) {
				testOffloadOrder(t, c, async)
			})
		}
	})
}

func testOffloadOrder(t *testing.T, c testenv.Combo, async bool) {
	testenv.CheckLeaks(t)
	g := newGroup(t, c, loopgroup.WithLoops(1))
	ex := newExecGroup(t, loopgroup.WithLoops(3))
	h := &orderHandler{ex: ex, async: async}
	s, err := g.Serve("tcp", "127.0.0.1:0", h)
	require.NoError(t, err)
	defer shutdownServer(t, s)
	nc, err := net.Dial("tcp", s.Addr().String())
	require.NoError(t, err)
	defer nc.Close()
	_ = nc.SetDeadline(time.Now().Add(20 * time.Second))
	req := make([]byte, 60)
	for i := range req {
		req[i] = byte(i)
	}
	_, err = nc.Write(req)
	require.NoError(t, err)
	got := make([]byte, len(req))
	_, err = io.ReadFull(nc, got)
	require.NoError(t, err)
	assert.Equal(t, req, got)
}

type orderHandler struct {
	ex    *loopgroup.Group
	async bool
}

func (h *orderHandler) OnOpen(c *engine.Conn) { c.SetValue(h.ex.Next()) } // pin
func (h *orderHandler) OnData(c *engine.Conn, b []byte) {
	pinned := c.Value().(*engine.Loop)
	for _, r := range b {
		if h.async {
			// The other pattern: write from the executor loop itself.
			// AsyncWrite copies and keeps the order of one goroutine's writes.
			_ = pinned.ExecuteFunc(func() {
				time.Sleep(time.Duration(r%3) * time.Millisecond)
				_ = c.AsyncWrite([]byte{r})
			})
			continue
		}
		_ = loopgroup.Offload(pinned, c, func() (byte, error) {
			time.Sleep(time.Duration(r%3) * time.Millisecond)
			return r, nil
		}, func(c *engine.Conn, v byte, err error) { _, _ = c.Write([]byte{v}) })
	}
}
func (h *orderHandler) OnClose(c *engine.Conn, err error) {}

// TestOffloadErrors: a panic in the work reaches done as an error on the
// connection's loop; a shut-down executor refuses at once.
func TestOffloadErrors(t *testing.T) {
	testenv.ForEachBackend(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		g := newGroup(t, c, loopgroup.WithLoops(1))
		ex, err := loopgroup.NewExecutorGroup(loopgroup.WithLoops(1))
		require.NoError(t, err)
		type outcome struct {
			onLoop bool
			err    error
		}
		res := make(chan outcome, 1)
		opened := make(chan *engine.Conn, 1)
		h := &probe{fn: func(conn *engine.Conn) { opened <- conn }}
		s, err := g.Serve("tcp", "127.0.0.1:0", h)
		require.NoError(t, err)
		defer shutdownServer(t, s)
		nc, err := net.Dial("tcp", s.Addr().String())
		require.NoError(t, err)
		defer nc.Close()
		conn := <-opened
		require.NoError(t, loopgroup.Offload(ex, conn, func() (int, error) { panic("boom") },
			func(c *engine.Conn, v int, err error) { res <- outcome{c.Loop().InEventLoop(), err} }))
		out := <-res
		assert.True(t, out.onLoop, "done runs on the connection's loop")
		assert.ErrorIs(t, out.err, engine.ErrPanicked)

		require.NoError(t, ex.Close())
		err = loopgroup.Offload(ex, conn, func() (int, error) { return 1, nil },
			func(*engine.Conn, int, error) { t.Error("done ran after a refusal") })
		assert.True(t, errors.Is(err, engine.ErrShutdown), "got %v", err)
	})
}
