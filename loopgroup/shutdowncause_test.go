package loopgroup_test

import (
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/internal/testenv"
	"github.com/ringloop/ringloop/loopgroup"
)

// causeHandler reports each connection's open and OnClose cause.
type causeHandler struct {
	opened chan struct{}
	closed chan error
}

func (h *causeHandler) OnOpen(*engine.Conn)               { h.opened <- struct{}{} }
func (h *causeHandler) OnData(*engine.Conn, []byte)       {}
func (h *causeHandler) OnClose(_ *engine.Conn, err error) { h.closed <- err }

// TestGroupShutdownCause: connections still open when their group shuts
// down end with a cause that is engine.ErrShutdown, on every loop.
func TestGroupShutdownCause(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		const n = 4
		g, err := loopgroup.New(loopgroup.WithLoops(2), loopgroup.WithEngineOptions(c.Options()...))
		require.NoError(t, err)
		h := &causeHandler{opened: make(chan struct{}, n), closed: make(chan error, n)}
		srv, err := loopgroup.Serve(g, "tcp", "127.0.0.1:0", h)
		require.NoError(t, err)
		for range n {
			peer, err := net.DialTimeout("tcp", srv.Addr().String(), 5*time.Second)
			require.NoError(t, err)
			defer peer.Close()
		}
		for range n {
			select {
			case <-h.opened:
			case <-time.After(10 * time.Second):
				t.Fatal("a connection did not open")
			}
		}
		require.NoError(t, g.Close())
		for range n {
			select {
			case err := <-h.closed:
				require.ErrorIs(t, err, engine.ErrShutdown)
				require.Equal(t, "engine: loop shut down", err.Error())
			case <-time.After(10 * time.Second):
				t.Fatal("OnClose did not run")
			}
		}
	})
}
