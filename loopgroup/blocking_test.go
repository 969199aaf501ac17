package loopgroup_test

import (
	"errors"
	"io"
	"net"
	"os"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/internal/testenv"
	"github.com/ringloop/ringloop/loopgroup"
	"github.com/ringloop/ringloop/tasks"
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
	ex := newExecGroup(t, loopgroup.WithEngineOptions(engine.WithBackend(engine.BackendUring)))
	assert.Equal(t, 2*runtime.GOMAXPROCS(0), len(ex.Loops()))
	for _, l := range ex.Loops() {
		assert.Equal(t, engine.BackendEpoll, l.Backend().Name)
	}
	ex2 := newExecGroup(t, loopgroup.WithLoops(3))
	assert.Equal(t, 3, len(ex2.Loops()))
	_, err := loopgroup.NewExecutorGroup(loopgroup.WithLoops(-1))
	assert.Error(t, err)
}

// slowHandler serves one-byte requests: 's' blocks until the test opens the
// gate (on the executor group, or inline on the I/O loop when inline is
// set) and answers 'S'; anything else is echoed at once.
type slowHandler struct {
	ex      engine.Loops
	inline  bool
	started chan struct{} // one send as each blocking job begins
	gate    chan struct{} // closed by the test: the blocking work ends
}

func newSlowHandler(ex engine.Loops, inline bool) *slowHandler {
	return &slowHandler{ex: ex, inline: inline, started: make(chan struct{}, 4), gate: make(chan struct{})}
}

// block is the blocking work: a database call, say.
func (h *slowHandler) block() {
	h.started <- struct{}{}
	<-h.gate
}

func (h *slowHandler) OnOpen(c *engine.Conn) {}
func (h *slowHandler) OnData(c *engine.Conn, b []byte) {
	for _, r := range b {
		if r != 's' {
			_, _ = c.Write([]byte{r})
			continue
		}
		if h.inline {
			h.block() // what a blocking handler must never do
			_, _ = c.Write([]byte("S"))
			continue
		}
		err := loopgroup.Offload(h.ex, c, func() (string, error) {
			h.block()
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

// ping sends a one-byte ping on nc and waits for its echo until d passes.
func ping(nc net.Conn, d time.Duration) error {
	if _, err := nc.Write([]byte("p")); err != nil {
		return err
	}
	_ = nc.SetReadDeadline(time.Now().Add(d))
	defer nc.SetReadDeadline(time.Time{})
	b := make([]byte, 1)
	if _, err := io.ReadFull(nc, b); err != nil {
		return err
	}
	if b[0] != 'p' {
		return errors.New("ping answered " + string(b))
	}
	return nil
}

// TestBlockingWorkNeverStallsIOLoop: two connections start blocking work
// while a third pings the same (single) I/O loop. With the work on the
// executor group, every ping is answered while the work is still blocked
// (the test holds it until the pings are done, so no speed of the machine
// makes this pass or fail); the control run, blocking inline on the I/O
// loop, shows that the check can see a stall: no ping is answered until the
// work is released.
func TestBlockingWorkNeverStallsIOLoop(t *testing.T) {
	const patience = 10 * time.Second // a stalled loop never answers; a slow one does in time
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
				h := newSlowHandler(ex, inline)
				s, err := loopgroup.Serve(io1, "tcp", "127.0.0.1:0", h)
				require.NoError(t, err)
				defer shutdownServer(t, s)
				release := sync.OnceFunc(func() { close(h.gate) })
				defer release() // before the shutdown, even when the test fails
				addr := s.Addr().String()
				pinger := echoOnce(t, addr, 0) // connected and warm
				defer pinger.Close()

				slow := 2
				if inline {
					slow = 1 // the first blocks the loop: the second would not be read
				}
				var wg sync.WaitGroup
				for range slow {
					nc := echoOnce(t, addr, 1)
					defer nc.Close()
					wg.Add(1)
					go func() {
						defer wg.Done()
						_, err := nc.Write([]byte("s"))
						assert.NoError(t, err)
						_ = nc.SetReadDeadline(time.Now().Add(2 * patience))
						b := make([]byte, 1)
						_, err = io.ReadFull(nc, b)
						assert.NoError(t, err)
						assert.Equal(t, "S", string(b))
					}()
				}
				for range slow {
					select {
					case <-h.started:
					case <-time.After(patience):
						t.Fatal("the blocking work did not start")
					}
				}
				if inline {
					// However long it waits, the ping cannot be answered
					// while the loop is blocked: a short wait shows it.
					err := ping(pinger, 50*time.Millisecond)
					assert.ErrorIs(t, err, os.ErrDeadlineExceeded, "the control must see the loop stall")
					release()
					b := make([]byte, 1)
					_ = pinger.SetReadDeadline(time.Now().Add(patience))
					_, err = io.ReadFull(pinger, b)
					require.NoError(t, err, "the ping after the stall")
				} else {
					for i := range 10 {
						require.NoError(t, ping(pinger, patience), "ping %d while the work is blocked", i)
					}
					release()
				}
				wg.Wait()
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
	s, err := loopgroup.Serve(g, "tcp", "127.0.0.1:0", h)
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
			_ = pinned.Execute(tasks.Func(func() {
				time.Sleep(time.Duration(r%3) * time.Millisecond)
				_ = c.AsyncWrite([]byte{r})
			}))
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
		s, err := loopgroup.Serve(g, "tcp", "127.0.0.1:0", h)
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
		assert.ErrorIs(t, out.err, tasks.ErrPanicked)

		require.NoError(t, ex.Close())
		err = loopgroup.Offload(ex, conn, func() (int, error) { return 1, nil },
			func(*engine.Conn, int, error) { t.Error("done ran after a refusal") })
		assert.True(t, errors.Is(err, engine.ErrShutdown), "got %v", err)
	})
}
