package loopgroup_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/examples/echo"
	"github.com/ringloop/ringloop/internal/testenv"
	"github.com/ringloop/ringloop/loopgroup"
)

// newGroup builds a group for combo c and shuts it down at cleanup.
func newGroup(t *testing.T, c testenv.Combo, opts ...loopgroup.Option) *loopgroup.Group {
	t.Helper()
	all := append([]loopgroup.Option{loopgroup.WithEngineOptions(c.Options()...)}, opts...)
	g, err := loopgroup.New(all...)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, g.Close()) })
	return g
}

// echoOnce dials addr, sends a line and checks it comes back; it keeps the
// connection open and returns it.
func echoOnce(t testing.TB, addr string, i int) net.Conn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	require.NoError(t, err)
	_ = c.SetDeadline(time.Now().Add(20 * time.Second))
	msg := []byte(fmt.Sprintf("hello %d\n", i))
	_, err = c.Write(msg)
	require.NoError(t, err)
	buf := make([]byte, len(msg))
	_, err = io.ReadFull(c, buf)
	require.NoError(t, err)
	require.True(t, bytes.Equal(msg, buf), "echo %q != %q", buf, msg)
	return c
}

// echoMany runs n echo connections concurrently (at most 32 at a time) and
// returns them open.
func echoMany(t *testing.T, addr string, n int) []net.Conn {
	t.Helper()
	conns := make([]net.Conn, n)
	var wg sync.WaitGroup
	sem := make(chan struct{}, 32)
	for i := range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			conns[i] = echoOnce(t, addr, i)
		}()
	}
	wg.Wait()
	return conns
}

func closeAll(cs []net.Conn) {
	for _, c := range cs {
		if c != nil {
			_ = c.Close()
		}
	}
}

// counting is an echo handler that records, per loop, the connections it
// served.
type counting struct {
	echo.Handler
	mu     sync.Mutex
	opened map[*engine.Loop]int
	byAddr map[string]*engine.Loop // peer address → serving loop
	closed int
}

func newCounting() *counting {
	return &counting{opened: map[*engine.Loop]int{}, byAddr: map[string]*engine.Loop{}}
}

func (h *counting) OnOpen(c *engine.Conn) {
	h.mu.Lock()
	h.opened[c.Loop()]++
	h.byAddr[c.RemoteAddr().String()] = c.Loop()
	h.mu.Unlock()
}

// loopOf returns the loop that serves the client connection nc.
func (h *counting) loopOf(nc net.Conn) *engine.Loop {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.byAddr[nc.LocalAddr().String()]
}

func (h *counting) OnClose(c *engine.Conn, err error) {
	h.mu.Lock()
	h.closed++
	h.mu.Unlock()
}

func (h *counting) perLoop(g *loopgroup.Group) []int {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]int, len(g.Loops()))
	for i, l := range g.Loops() {
		out[i] = h.opened[l]
	}
	return out
}

func (h *counting) closedCount() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.closed
}

func shutdownServer(t *testing.T, s *loopgroup.Server) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, s.Shutdown(ctx))
}
