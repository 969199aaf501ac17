package engine_test

import (
	"io"
	"net"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/internal/testenv"
)

// TestAdaptiveSpin: with a spare P a loop of either threading mode spins
// between the round trips of a ping-pong (Metrics.Spins: at least while it
// measures whether spinning pays), and at GOMAXPROCS=1 none does. Each
// combo's loop needs the process's only spinning slot at GOMAXPROCS=2, so a
// slot a closed loop kept would fail the next combo. The limit is a second, so that any gap qualifies
// however slow the machine.
func TestAdaptiveSpin(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		for _, procs := range []int{2, 1} {
			func() {
				old := runtime.GOMAXPROCS(procs)
				defer runtime.GOMAXPROCS(old)
				l, err := engine.New(c.Options(engine.WithSpin(time.Second, false))...)
				require.NoError(t, err)
				defer l.Close()
				ln, err := engine.Listen(l, "tcp", "127.0.0.1:0", echoConn{})
				require.NoError(t, err)
				nc, err := net.DialTimeout("tcp", ln.Addr().String(), 10*time.Second)
				require.NoError(t, err)
				defer nc.Close()
				require.NoError(t, nc.SetDeadline(time.Now().Add(30*time.Second)))
				buf := make([]byte, 64)
				for range 50 {
					_, err := nc.Write(buf)
					require.NoError(t, err)
					_, err = io.ReadFull(nc, buf)
					require.NoError(t, err)
				}
				spins := l.Metrics().Spins
				if procs > 1 {
					require.Positive(t, spins, "a loop with a spare P never spun")
				} else {
					require.Zero(t, spins, "GOMAXPROCS=%d", procs)
				}
				require.NoError(t, ln.Close())
				require.NoError(t, l.Close())
			}()
		}
	})
}
