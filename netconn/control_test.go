package netconn_test

// The library's own steps (close, read resume, accept pause and resume) go on
// the loop's control ring: a task ring the user bounded
// (engine.WithMaxPendingTasks) and filled cannot drop them.

import (
	"bytes"
	"context"
	"io"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/internal/testenv"
	"github.com/ringloop/ringloop/netconn"
)

// boundedLoop is a loop whose task ring holds 16 tasks.
func boundedLoop(t *testing.T, c testenv.Combo) *engine.Loop {
	l, err := engine.New(c.Options(engine.WithMaxPendingTasks(16, nil))...)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, l.Close()) })
	return l
}

// acceptRaw dials ln with the standard library and accepts the ringloop side.
func acceptRaw(t *testing.T, ln *netconn.Listener) (net.Conn, *netconn.Conn) {
	t.Helper()
	peer, err := net.Dial("tcp", ln.Addr().String())
	require.NoError(t, err)
	t.Cleanup(func() { peer.Close() })
	nc, err := ln.Accept()
	require.NoError(t, err)
	t.Cleanup(func() { nc.Close() })
	return peer, nc.(*netconn.Conn)
}

// TestCloseWithFullTaskRing: Close while the loop's task ring is full closes
// the socket: the peer reads what was written, then EOF.
func TestCloseWithFullTaskRing(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		l := boundedLoop(t, c)
		ln := listen(t, l)
		peer, nc := acceptRaw(t, ln)
		_, err := nc.Write([]byte("last words"))
		require.NoError(t, err)
		release := testenv.FillTaskRing(t, l)
		require.NoError(t, nc.Close())
		release()
		_ = peer.SetReadDeadline(time.Now().Add(30 * time.Second))
		got, err := io.ReadAll(peer)
		require.NoError(t, err, "the peer must read EOF")
		require.Equal(t, "last words", string(got))
	})
}

// TestReadResumeWithFullTaskRing: once Read drains a full read buffer, the
// loop reads again even if its task ring was full when Read asked it to.
func TestReadResumeWithFullTaskRing(t *testing.T) {
	testenv.ForEachBackend(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		const limit = 64 << 10
		l := boundedLoop(t, c)
		ln := listen(t, l, netconn.WithLimits(netconn.Limits{Read: limit, Write: limit}))
		peer, nc := acceptRaw(t, ln)
		// Far more than the kernel buffers hold, so the loop must pause.
		payload := bytes.Repeat([]byte("0123456789abcdef"), (32<<20)/16)
		go func() { _, _ = peer.Write(payload) }()
		testenv.Eventually(t, 30*time.Second, "a full read buffer", func() bool { return nc.Buffered() >= limit })
		release := testenv.FillTaskRing(t, l)
		_ = nc.SetReadDeadline(time.Now().Add(30 * time.Second))
		got := make([]byte, len(payload))
		_, err := io.ReadFull(nc, got[:limit]) // drains the buffer: asks the loop to read again
		require.NoError(t, err)
		release()
		_, err = io.ReadFull(nc, got[limit:])
		require.NoError(t, err, "reading must resume")
		require.Equal(t, payload, got)
	})
}

// TestAcceptResumeWithFullTaskRing: once Accept drains a full accept queue,
// the loop accepts again even if its task ring was full when Accept asked.
func TestAcceptResumeWithFullTaskRing(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		const queue = 2
		l := boundedLoop(t, c)
		ln := listen(t, l, netconn.WithLimits(netconn.Limits{AcceptQueue: queue}))
		var peers []net.Conn
		t.Cleanup(func() {
			for _, p := range peers {
				p.Close()
			}
		})
		for range queue {
			p, err := net.Dial("tcp", ln.Addr().String())
			require.NoError(t, err)
			peers = append(peers, p)
		}
		testenv.Eventually(t, 30*time.Second, "a full accept queue", func() bool { return ln.Paused() && ln.Queued() == queue })
		// The pause is applied on the loop; a barrier through the task ring
		// makes sure it ran before the ring fills.
		_, err := engine.Submit(l, func() (struct{}, error) { return struct{}{}, nil }).Await(context.Background())
		require.NoError(t, err)
		release := testenv.FillTaskRing(t, l)
		for range queue { // draining the queue asks the loop to accept again
			nc, err := ln.Accept()
			require.NoError(t, err)
			defer nc.Close()
		}
		release()
		p, err := net.Dial("tcp", ln.Addr().String())
		require.NoError(t, err)
		peers = append(peers, p)
		got := make(chan error, 1)
		go func() {
			nc, err := ln.Accept()
			if err == nil {
				nc.Close()
			}
			got <- err
		}()
		select {
		case err := <-got:
			require.NoError(t, err)
		case <-time.After(30 * time.Second):
			_ = ln.Close()
			<-got
			t.Fatal("accepting never resumed")
		}
	})
}
