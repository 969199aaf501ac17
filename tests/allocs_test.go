package tests

import (
	"io"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ringloop/ringloop/internal/testenv"
	"github.com/ringloop/ringloop/tasks"
)

// TestEchoRoundTripAllocs: a steady-state echo round trip (receive →
// OnData → Write → send, and the loop's waits between them) allocates
// nothing in the whole process, in every backend, profile and threading
// mode; also with a timer pending, so that each wait carries a deadline.
func TestEchoRoundTripAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		for _, timer := range []bool{false, true} {
			l := newLoop(t, c)
			if timer {
				s, err := l.Schedule(tasks.Func(func() {}), time.Hour)
				require.NoError(t, err)
				t.Cleanup(func() { s.Cancel() })
			}
			ln := listenEcho(t, l)
			peer, err := net.Dial("tcp", ln.Addr().String())
			require.NoError(t, err)
			t.Cleanup(func() { peer.Close() })
			msg, buf := make([]byte, 128), make([]byte, 128)
			round := func() {
				_, err := peer.Write(msg)
				require.NoError(t, err)
				_, err = io.ReadFull(peer, buf)
				require.NoError(t, err)
			}
			for range 200 { // warm up: buffers reach their steady size
				round()
			}
			require.Zero(t, testing.AllocsPerRun(1000, round), "allocations per round trip (timer pending: %v)", timer)
		}
	})
}
