package websocket_test

import (
	"bytes"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/internal/testenv"
	"github.com/ringloop/ringloop/websocket"
)

// TestHubPausesSender: a member that does not read is held over its high
// watermark (the slow-consumer timeout is a minute: it stays held); a
// broadcast from a goroutine is then refused with ErrHubBacklog, but one
// from another member's OnMessage is relayed, and that member's reads are
// paused, on its own loop. When the held member leaves the hub (Remove,
// from this goroutine) the congestion clears, the sender's reads resume,
// and the message it sent meanwhile is relayed after the first: nothing
// lost, nothing reordered.
func TestHubPausesSender(t *testing.T) {
	buf := engine.WithSocketOptions(engine.SocketOptions{SendBuffer: 16 << 10, RecvBuffer: 16 << 10})
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		ch := newChat()
		ch.hub.SlowTimeout = time.Minute
		_, addr := serveGroup(t, c, ch, nil, buf)
		silent := dialRaw(t, addr)
		sc := <-ch.opens
		a := dialRaw(t, addr)
		ac := <-ch.opens

		// a reads everything, keeping the text messages.
		var mu sync.Mutex
		var texts []string
		go func() {
			for {
				f, err := a.read()
				if err != nil {
					return
				}
				if f.b0 == finText {
					mu.Lock()
					texts = append(texts, string(f.payload))
					mu.Unlock()
				}
			}
		}()
		got := func() []string {
			mu.Lock()
			defer mu.Unlock()
			return append([]string(nil), texts...)
		}

		// Held for good: the silent member is given more than the
		// kernel can ever take from it (the peer's receive buffer, its
		// own send buffer) plus its high watermark, so its output stays
		// over the low watermark for as long as the peer does not read.
		// Held only just over the watermark, it could drain under the
		// low one into kernel buffers behind the test's back, clearing
		// the stall, and m1 would pass without a pause.
		rcv := sockopt(t, silent.Conn.(*net.TCPConn), unix.SO_RCVBUF)
		snd, err := unix.GetsockoptInt(sc.Conn().FD(), unix.SOL_SOCKET, unix.SO_SNDBUF)
		require.NoError(t, err)
		chunk := bytes.Repeat([]byte("x"), 16<<10)
		for pile := 0; pile < rcv+snd+128<<10; pile += len(chunk) {
			require.NoError(t, sc.AsyncWriteMessage(websocket.Binary, chunk))
		}
		testenv.Eventually(t, 60*time.Second, "the silent member held over its watermark", func() bool {
			st := ch.hub.Stats()
			return st.Held == 1 && !sc.Writable() && ac.Writable()
		})
		require.ErrorIs(t, ch.hub.Broadcast(websocket.Text, []byte("refused")), websocket.ErrHubBacklog)

		reading := func() bool {
			r, err := engine.Submit(ac.Conn().Loop(), func() (bool, error) { return ac.Conn().Reading(), nil }).Await(t.Context())
			require.NoError(t, err)
			return r
		}
		_, err = a.Write(frame(finText, []byte("m1"), true))
		require.NoError(t, err)
		testenv.Eventually(t, 60*time.Second, "m1 relayed", func() bool { return len(got()) == 1 })
		testenv.Eventually(t, 60*time.Second, "the sender's reads paused", func() bool { return !reading() })
		require.EqualValues(t, 1, ch.hub.Stats().Pauses)
		_, err = a.Write(frame(finText, []byte("m2"), true))
		require.NoError(t, err)

		ch.hub.Remove(sc)
		testenv.Eventually(t, 60*time.Second, "m2 relayed once the hub is clear", func() bool { return len(got()) == 2 })
		require.Equal(t, []string{"m1", "m2"}, got())
		require.True(t, reading())
		st := ch.hub.Stats()
		require.Zero(t, st.Held, "%+v", st)
		require.Zero(t, st.Slow, "%+v", st)
		require.Zero(t, st.Dropped, "%+v", st)
		require.Zero(t, ch.failed.Load(), ch.failures())
		silent.Close()
		a.Close()
	})
}

// sockopt reads an int socket option of a net.TCPConn.
func sockopt(t *testing.T, c *net.TCPConn, opt int) int {
	t.Helper()
	rc, err := c.SyscallConn()
	require.NoError(t, err)
	var v int
	var gerr error
	require.NoError(t, rc.Control(func(fd uintptr) { v, gerr = unix.GetsockoptInt(int(fd), unix.SOL_SOCKET, opt) }))
	require.NoError(t, gerr)
	return v
}
