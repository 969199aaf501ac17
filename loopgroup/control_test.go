package loopgroup_test

import (
	"context"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/internal/testenv"
	"github.com/ringloop/ringloop/loopgroup"
	"github.com/ringloop/ringloop/tasks"
)

// offloader offloads each read to ex; work waits for proceed, done writes
// the answer on the connection's loop.
type offloader struct {
	ex      *loopgroup.Group
	started chan struct{}
	proceed chan struct{}
}

func (o *offloader) OnOpen(*engine.Conn) {}
func (o *offloader) OnData(c *engine.Conn, b []byte) {
	_ = loopgroup.Offload(o.ex, c, func() (string, error) {
		o.started <- struct{}{}
		<-o.proceed
		return "done", nil
	}, func(c *engine.Conn, v string, err error) {
		_, _ = c.Write([]byte(v))
	})
}
func (o *offloader) OnClose(*engine.Conn, error) {}

// TestOffloadDoneWithFullTaskRing: an offload's done runs on the
// connection's loop even if that loop's task ring is full when the work
// finishes.
func TestOffloadDoneWithFullTaskRing(t *testing.T) {
	testenv.ForEachBackend(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		l, err := engine.New(c.Options(engine.WithMaxPendingTasks(16, nil))...)
		require.NoError(t, err)
		defer func() { require.NoError(t, l.Close()) }()
		ex := newExecGroup(t, loopgroup.WithLoops(1))
		h := &offloader{ex: ex, started: make(chan struct{}, 1), proceed: make(chan struct{})}
		ln, err := engine.Listen(l, "tcp", "127.0.0.1:0", h)
		require.NoError(t, err)
		defer ln.Close()
		peer, err := net.Dial("tcp", ln.Addr().String())
		require.NoError(t, err)
		defer peer.Close()
		_, err = peer.Write([]byte("q"))
		require.NoError(t, err)
		<-h.started

		// Hold the connection's loop and fill its task ring, then let the
		// work finish: its done must still reach the loop.
		hold, running := make(chan struct{}), make(chan struct{})
		require.NoError(t, l.Execute(tasks.Func(func() { close(running); <-hold })))
		<-running
		var once sync.Once
		release := func() { once.Do(func() { close(hold) }) }
		defer release()
		for i := 0; ; i++ {
			if err := l.Execute(tasks.Func(func() {})); err != nil {
				require.ErrorIs(t, err, tasks.ErrRejected)
				break
			}
			require.Less(t, i, 1<<16, "the task ring never filled")
		}
		close(h.proceed)
		// The executor loop runs done's hand-off; a task queued after it on
		// the same executor loop runs once it is done.
		_, err = engine.Submit(ex.Next(), func() (struct{}, error) { return struct{}{}, nil }).Await(ctxTimeout(t, 30*time.Second))
		require.NoError(t, err)
		release()
		_ = peer.SetReadDeadline(time.Now().Add(30 * time.Second))
		buf := make([]byte, 4)
		_, err = io.ReadFull(peer, buf)
		require.NoError(t, err, "done must run")
		require.Equal(t, "done", string(buf))
	})
}

// ctxTimeout returns a context that ends after d (an upper bound for a wait).
func ctxTimeout(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}
