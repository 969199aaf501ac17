package httpserver_test

import (
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/net/http2"

	"github.com/ringloop/ringloop/httpserver"
	"github.com/ringloop/ringloop/internal/testenv"
)

// TestH2ClientGoAway: a client's GOAWAY followed at once by a PING, on a
// connection with no stream open (h2spec generic/3.8/1 and http2/7/1). The
// server ends its side cleanly: the client reads its frames, then the end,
// never a reset (closing with the PING unread would reset). A client that
// then keeps its side open is cut after the idle timeout.
func TestH2ClientGoAway(t *testing.T) {
	testenv.ForEachBackend(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		s, err := httpserver.New(stdEcho, httpserver.WithH2C(),
			httpserver.WithTimeouts(httpserver.Timeouts{Idle: 500 * time.Millisecond}))
		require.NoError(t, err)
		base := onLoop(t, c, s)
		for round := range 20 {
			r := dialH2(t, base)
			require.NoError(t, r.fr.WriteGoAway(0, http2.ErrCode(0xff), nil))
			require.NoError(t, r.fr.WritePing(false, [8]byte{'h', '2'}))
			for {
				f, err := r.fr.ReadFrame()
				if err != nil {
					require.ErrorIs(t, err, io.EOF, "round %d: the server's end, not a reset", round)
					break
				}
				require.NotNil(t, f)
			}
			_ = r.c.Close()
		}
		// A client that keeps its side open after its GOAWAY: the server
		// cuts it within the idle timeout.
		r := dialH2(t, base)
		require.NoError(t, r.fr.WriteGoAway(0, http2.ErrCodeNo, nil))
		_, err = io.Copy(io.Discard, r.c) // the server's end of its side
		require.NoError(t, err)
		testenv.Eventually(t, 30*time.Second, "the half-closed connection closed", func() bool {
			return s.Metrics().Connections == 0
		})
	})
}
