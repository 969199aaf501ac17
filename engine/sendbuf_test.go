package engine_test

import (
	"bytes"
	"io"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/internal/testenv"
	"github.com/ringloop/ringloop/tasks"
)

// openedConn hands its connection to the test and ignores what it reads.
type openedConn chan *engine.Conn

func (o openedConn) OnOpen(c *engine.Conn)       { o <- c }
func (o openedConn) OnData(*engine.Conn, []byte) {}
func (o openedConn) OnClose(*engine.Conn, error) {}

// onLoop runs fn on l and returns its result.
func onLoop[T any](t *testing.T, l *engine.Loop, fn func() T) T {
	t.Helper()
	return testenv.OnLoop(t, l, fn)
}

// TestIdleConnTrimsSendBuffers: once bursts of several MiB written through
// Write and AsyncWrite have drained to a peer that reads, every buffer the
// connection keeps for sending is back under the idle bound, so an idle
// connection does not hold on to its largest burst (issue 16, item 8).
func TestIdleConnTrimsSendBuffers(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		l := newLoop(t, c)
		opened := make(openedConn, 1)
		// Small socket buffers, so the first burst stays in flight while
		// the next piles up behind it; a limit that lets AsyncWrite take a
		// whole burst.
		ln, err := engine.Listen(l, "tcp", "127.0.0.1:0", opened,
			engine.WithSocketOptions(engine.SocketOptions{SendBuffer: 64 << 10, RecvBuffer: 64 << 10}), engine.WithBufferLimits(engine.BufferLimits{AsyncWrite: 64 << 20}))
		require.NoError(t, err)
		defer ln.Close()
		peer, err := net.Dial("tcp", ln.Addr().String())
		require.NoError(t, err)
		defer peer.Close()
		require.NoError(t, peer.(*net.TCPConn).SetReadBuffer(64<<10))
		conn := <-opened

		const chunk, chunks = 64 << 10, 32 // 2 MiB a burst
		var sent bytes.Buffer
		burst := func(seed byte) [][]byte {
			ps := make([][]byte, chunks)
			for i := range ps {
				ps[i] = make([]byte, chunk)
				for j := range ps[i] {
					ps[i][j] = seed + byte(i) + byte(j*7)
				}
				sent.Write(ps[i])
			}
			return ps
		}
		// Two bursts through Write in two tasks: the first is handed to
		// the driver, the second grows the outbound buffer behind it.
		for _, seed := range []byte{1, 2} {
			ps := burst(seed)
			onLoop(t, l, func() error {
				for _, p := range ps {
					if _, err := conn.Write(p); err != nil {
						return err
					}
				}
				return nil
			})
		}
		// One burst through AsyncWrite while the loop is held, so it
		// gathers in a single batch.
		release := make(chan struct{})
		require.NoError(t, l.Execute(tasks.Func(func() { <-release })))
		for _, p := range burst(3) {
			require.NoError(t, conn.AsyncWrite(p))
		}
		close(release)

		_ = peer.SetReadDeadline(time.Now().Add(30 * time.Second))
		got := make([]byte, sent.Len())
		_, err = io.ReadFull(peer, got)
		require.NoError(t, err)
		require.True(t, bytes.Equal(sent.Bytes(), got), "the peer got other bytes than were written")

		// Every send has completed once nothing is buffered.
		testenv.Eventually(t, 10*time.Second, "the sends to complete", func() bool {
			return onLoop(t, l, conn.Buffered) == 0
		})
		caps := onLoop(t, l, func() [4]int {
			o, s, b, sp := conn.SendBufferCaps()
			return [4]int{o, s, b, sp}
		})
		for i, name := range []string{"outbound", "sending", "async batch", "async spare"} {
			require.LessOrEqual(t, caps[i], engine.MaxIdleBuffer, "an idle connection keeps a %d-byte %s buffer", caps[i], name)
		}
		require.NoError(t, conn.Close())
	})
}

// sendCaps returns a connection's send buffer capacities (on its loop).
func sendCaps(t *testing.T, l *engine.Loop, conn *engine.Conn) [4]int {
	return onLoop(t, l, func() [4]int {
		o, s, b, sp := conn.SendBufferCaps()
		return [4]int{o, s, b, sp}
	})
}

// TestIdleConnReleasesSendBuffers: a connection that wrote a large response
// keeps its buffers while it writes and while its bytes are in flight, and
// gives every one of them up after a sweep period without writes; it then
// writes again as before. The sweeps are run by hand (the period is an hour)
// so that the test decides what happened between them.
func TestIdleConnReleasesSendBuffers(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		l, err := engine.New(c.Options()...)
		require.NoError(t, err)
		l.SetTrimPeriod(time.Hour)
		t.Cleanup(func() { _ = l.Close() })
		opened := make(openedConn, 1)
		ln, err := engine.Listen(l, "tcp", "127.0.0.1:0", opened,
			engine.WithSocketOptions(engine.SocketOptions{SendBuffer: 64 << 10, RecvBuffer: 64 << 10}))
		require.NoError(t, err)
		defer ln.Close()
		peer, err := net.Dial("tcp", ln.Addr().String())
		require.NoError(t, err)
		defer peer.Close()
		require.NoError(t, peer.(*net.TCPConn).SetReadBuffer(64<<10))
		conn := <-opened

		payload := func(n int, seed byte) []byte {
			p := make([]byte, n)
			for i := range p {
				p[i] = seed + byte(i*13)
			}
			return p
		}
		held := func(caps [4]int) bool { return caps[0]+caps[1]+caps[2]+caps[3] > 0 }
		readAll := func(want []byte) {
			t.Helper()
			_ = peer.SetReadDeadline(time.Now().Add(30 * time.Second))
			got := make([]byte, len(want))
			_, err := io.ReadFull(peer, got)
			require.NoError(t, err)
			require.True(t, bytes.Equal(want, got), "the peer got other bytes than were written")
			testenv.Eventually(t, 10*time.Second, "the sends to complete", func() bool {
				return onLoop(t, l, conn.Buffered) == 0
			})
		}

		// 4 MiB the peer does not read yet: the sends stay in flight
		// through two sweeps, and the buffers with them.
		big := payload(4<<20, 1)
		onLoop(t, l, func() error { _, err := conn.Write(big); return err })
		onLoop(t, l, func() bool { l.TrimSweep(); l.TrimSweep(); return true })
		require.True(t, held(sendCaps(t, l, conn)), "buffers released while bytes were in flight")
		readAll(big)

		// A write since the last sweep keeps the buffers through it.
		resp := payload(100<<10, 2) // under the bound a connection keeps between bursts
		onLoop(t, l, func() error { l.TrimSweep(); _, err := conn.Write(resp); return err })
		readAll(resp)
		onLoop(t, l, func() bool { l.TrimSweep(); return true })
		require.True(t, held(sendCaps(t, l, conn)), "buffers released by the sweep right after a write")

		// A whole period without writes: everything goes.
		onLoop(t, l, func() bool { l.TrimSweep(); return true })
		require.Equal(t, [4]int{}, sendCaps(t, l, conn), "an idle connection keeps send buffers")

		// And the connection writes as before, from the loop and off it.
		again := payload(300<<10, 3)
		onLoop(t, l, func() error { _, err := conn.Write(again[:100<<10]); return err })
		require.NoError(t, conn.AsyncWrite(again[100<<10:]))
		readAll(again)
		require.NoError(t, conn.Close())
	})
}

// TestIdleConnTrimsOnItsOwn: with a short period, the loop's timer releases
// an idle connection's send buffers without anyone asking.
func TestIdleConnTrimsOnItsOwn(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		l, err := engine.New(c.Options()...)
		require.NoError(t, err)
		l.SetTrimPeriod(20 * time.Millisecond)
		t.Cleanup(func() { _ = l.Close() })
		opened := make(openedConn, 1)
		ln, err := engine.Listen(l, "tcp", "127.0.0.1:0", opened)
		require.NoError(t, err)
		defer ln.Close()
		peer, err := net.Dial("tcp", ln.Addr().String())
		require.NoError(t, err)
		defer peer.Close()
		conn := <-opened
		resp := bytes.Repeat([]byte("0123456789abcdef"), 32<<10) // 512 KiB
		require.NoError(t, conn.AsyncWrite(resp))
		_ = peer.SetReadDeadline(time.Now().Add(30 * time.Second))
		got := make([]byte, len(resp))
		_, err = io.ReadFull(peer, got)
		require.NoError(t, err)
		require.True(t, bytes.Equal(resp, got))
		testenv.Eventually(t, 30*time.Second, "the idle connection to release its send buffers", func() bool {
			return sendCaps(t, l, conn) == [4]int{}
		})
		require.NoError(t, conn.Close())
	})
}

// TestReleaseSendBuffers: after the release Wire.Open makes (exported for
// this test as ReleaseSendBuffers) a connection keeps no
// outbound buffer once what it wrote has been sent, whether the call came
// while the burst was pending or after it drained, and it writes on
// afterwards.
func TestReleaseSendBuffers(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		l := newLoop(t, c)
		opened := make(openedConn, 1)
		ln, err := engine.Listen(l, "tcp", "127.0.0.1:0", opened)
		require.NoError(t, err)
		defer ln.Close()
		peer, err := net.Dial("tcp", ln.Addr().String())
		require.NoError(t, err)
		defer peer.Close()
		require.NoError(t, peer.SetReadDeadline(time.Now().Add(30*time.Second)))
		conn := <-opened

		held := func() int {
			return onLoop(t, l, func() int {
				o, s, _, _ := conn.SendBufferCaps()
				return o + s
			})
		}
		exchange := func(n int, seed byte, release bool) {
			msg := make([]byte, n)
			for i := range msg {
				msg[i] = seed + byte(i*7)
			}
			onLoop(t, l, func() error {
				_, err := conn.Write(msg)
				if release {
					require.NoError(t, conn.ReleaseSendBuffers()) // pending: once drained
				}
				return err
			})
			got := make([]byte, n)
			_, err := io.ReadFull(peer, got)
			require.NoError(t, err)
			require.Equal(t, msg, got)
			testenv.Eventually(t, 10*time.Second, "the send to complete", func() bool {
				return onLoop(t, l, conn.Buffered) == 0
			})
		}
		exchange(4<<10, 1, false)
		exchange(100, 2, false)
		require.Positive(t, held(), "buffers kept for the next writes")
		require.NoError(t, onLoop(t, l, conn.ReleaseSendBuffers)) // drained: at once
		require.Zero(t, held(), "released while drained")

		exchange(4<<10, 3, true)
		testenv.Eventually(t, 10*time.Second, "the buffers released", func() bool { return held() == 0 })
		exchange(100, 4, false) // writes on
		require.NoError(t, conn.Close())
	})
}

// echoCounted echoes and counts the connections it has seen close.
type echoCounted struct{ closed chan struct{} }

func (echoCounted) OnOpen(*engine.Conn)             {}
func (echoCounted) OnData(c *engine.Conn, b []byte) { _, _ = c.Write(b) }
func (e echoCounted) OnClose(*engine.Conn, error)   { e.closed <- struct{}{} }

// TestClosedConnsLeaveTrimList: a connection that wrote is listed for the
// send-buffer sweep; once it closes it is off the list at once, not at the
// next sweep (which would keep every closed connection, and all it
// references, reachable until then), in whatever order connections close,
// before and after a sweep compacts the list.
func TestClosedConnsLeaveTrimList(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		l, err := engine.New(c.Options()...)
		require.NoError(t, err)
		l.SetTrimPeriod(time.Hour)
		t.Cleanup(func() { _ = l.Close() })
		h := echoCounted{closed: make(chan struct{}, 64)}
		ln, err := engine.Listen(l, "tcp", "127.0.0.1:0", h)
		require.NoError(t, err)
		defer ln.Close()
		const n = 12
		peers := make([]net.Conn, n)
		for i := range peers {
			p, err := net.Dial("tcp", ln.Addr().String())
			require.NoError(t, err)
			defer p.Close()
			require.NoError(t, p.SetDeadline(time.Now().Add(30*time.Second)))
			_, err = p.Write([]byte("ping"))
			require.NoError(t, err)
			_, err = io.ReadFull(p, make([]byte, 4))
			require.NoError(t, err)
			peers[i] = p
		}
		listed := func() int { return onLoop(t, l, l.TrimListed) }
		require.Equal(t, n, listed())
		closeAll := func(idx ...int) {
			for _, i := range idx {
				require.NoError(t, peers[i].Close())
			}
			for range idx {
				select {
				case <-h.closed:
				case <-time.After(30 * time.Second):
					t.Fatal("a connection the peer closed did not close")
				}
			}
		}
		closeAll(0, 5, 11, 3) // first, middle, last: the list stays consistent
		require.Equal(t, n-4, listed(), "closed connections still listed")
		// A sweep keeps those that wrote since the last one; then
		// connections write and close again.
		onLoop(t, l, func() int { l.TrimSweep(); return 0 })
		require.Equal(t, n-4, listed())
		closeAll(1, 10, 6)
		require.Equal(t, n-7, listed())
		closeAll(2, 4, 7, 8, 9)
		require.Equal(t, 0, listed())
	})
}
