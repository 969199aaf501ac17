package loopgroup_test

import (
	"context"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringloop/ringloop/internal/testenv"
	"github.com/ringloop/ringloop/loopgroup"
)

// TestHandoffDuringWorkerShutdown: clients keep connecting while the worker
// group shuts down under a boss that keeps accepting. Every accepted fd is
// either served or closed: no descriptor leaks, whichever hand-off path was
// in flight when a worker stopped, and every loop terminates.
func TestHandoffDuringWorkerShutdown(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		boss := newGroup(t, c, loopgroup.WithLoops(1))
		workers, err := loopgroup.New(loopgroup.WithLoops(2), loopgroup.WithEngineOptions(c.Options()...))
		require.NoError(t, err)
		h := newCounting()
		s, err := loopgroup.Serve(workers, "tcp", "127.0.0.1:0", h, loopgroup.WithBoss(boss))
		require.NoError(t, err)
		addr := s.Addr().String()

		var dialled atomic.Int64
		stop := make(chan struct{})
		var wg sync.WaitGroup
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					select {
					case <-stop:
						return
					default:
					}
					nc, err := net.DialTimeout("tcp", addr, time.Second)
					if err != nil {
						continue
					}
					dialled.Add(1)
					nc.Close()
				}
			}()
		}
		testenv.Eventually(t, 10*time.Second, "hand-offs", func() bool {
			return groupMetrics(boss).Handoffs > 40
		})
		mid := groupMetrics(boss)
		require.NoError(t, workers.Close())
		before := dialled.Load()
		testenv.Eventually(t, 10*time.Second, "more connections after the workers stopped", func() bool {
			return dialled.Load() > before+40
		})
		close(stop)
		wg.Wait()
		require.NoError(t, s.Close())
		st := groupMetrics(boss)
		assert.Positive(t, st.Handoffs)
		if workers.Loops()[0].Backend().Features.MsgRing {
			// The snapshot may catch one hand-off counted before its path.
			assert.LessOrEqual(t, mid.Handoffs-mid.MsgRingHandoffs, uint64(1), "MSG_RING while the workers run")
			assert.Greater(t, st.Handoffs, st.MsgRingHandoffs, "tasks once they shut down")
		} else {
			assert.Zero(t, st.MsgRingHandoffs)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		require.NoError(t, workers.Shutdown(ctx))
		// Every connection a worker was chosen for was served and closed,
		// or refused: none is still counted against a loop.
		for _, l := range workers.Loops() {
			assert.Zero(t, workers.Connections(l), "%s's connection count", l.Name())
		}
	})
}
