package tests

// Regression tests for the connection faults of the reliability review:
// bytes accepted by AsyncWrite and then lost, AsyncWrite without
// backpressure, a graceful close that never ends, a panicking callback that
// leaks its connection. Each runs on every backend and kernel profile.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/internal/testenv"
	"github.com/ringloop/ringloop/loopgroup"
	"github.com/ringloop/ringloop/tasks"
)

func discardLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// pattern returns n bytes that differ from one offset to the next.
func pattern(n int, seed byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = seed + byte(i*7+i>>8)
	}
	return b
}

// TestAsyncWriteBeforeCloseIsSent: bytes AsyncWrite accepted are sent before
// a Close that runs on the loop before the write's turn came; afterwards
// AsyncWrite says the connection is closed.
func TestAsyncWriteBeforeCloseIsSent(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		l := newLoop(t, c)
		r := newRecorder()
		_, peer := acceptOne(t, l, r)
		conn := <-r.opened
		payload := pattern(256<<10, 1)
		// Hold the loop in a task, accept the bytes, then close from the
		// loop before anything else it queued runs.
		release := make(chan struct{})
		require.NoError(t, l.Execute(tasks.Func(func() { <-release; _ = conn.Close() })))
		require.NoError(t, conn.AsyncWrite(payload))
		close(release)
		_ = peer.SetReadDeadline(time.Now().Add(30 * time.Second))
		got, err := io.ReadAll(peer)
		require.NoError(t, err)
		require.True(t, bytes.Equal(payload, got), "peer got %d of %d bytes", len(got), len(payload))
		require.NoError(t, waitErr(t, r.closed))
		require.ErrorIs(t, conn.AsyncWrite([]byte("late")), engine.ErrConnClosed)
	})
}

// TestAsyncWriteBeforePeerFINIsSent: a peer's FIN racing an off-loop
// producer's AsyncWrites loses nothing. By default the FIN closes the
// connection gracefully (with a HalfCloseHandler, here one whose
// OnReadClosed calls Close, the handler decides): either way the peer reads
// exactly the bytes of every AsyncWrite that returned nil, in order, then
// EOF, and the producer's first refusal other than ErrWriteBufferFull is
// ErrConnClosed. The producer writes until the close stops it, and the
// clients half-close at different points (at once, or after 1 byte, 64 KiB
// or 256 KiB of the reply), so every FIN races the producer's writes; no
// outcome depends on timing.
func TestAsyncWriteBeforePeerFINIsSent(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		for _, hc := range []bool{false, true} {
			name, wantClose := "EOFCloses", error(io.EOF)
			if hc {
				name, wantClose = "OnReadClosedCloses", nil
			}
			t.Run(name, func(t *testing.T) {
				testenv.CheckLeaks(t)
				l := newLoop(t, c)
				const conns = 20
				fw := &finWriter{results: map[string]chan finResult{}, closed: make(chan error, conns)}
				var h engine.Handler = fw
				if hc {
					h = finWriterHC{fw}
				}
				// A small limit keeps each connection's backlog small: the
				// producer backs off and retries while its writes are
				// refused as too many.
				ln, err := engine.Listen(l, "tcp", "127.0.0.1:0", h, engine.WithBufferLimits(engine.BufferLimits{AsyncWrite: 64 << 10}))
				require.NoError(t, err)
				defer ln.Close()

				errs := make(chan error, conns)
				for i := range conns {
					go func() { errs <- finClient(ln.Addr().String(), fw, finAfter[i%len(finAfter)]) }()
				}
				for range conns {
					require.NoError(t, <-errs) // each client gives up by its deadlines
				}
				for range conns {
					require.ErrorIs(t, waitErr(t, fw.closed), wantClose)
				}
			})
		}
	})
}

// finData is what a finWriter's producer writes, in turn and over again:
// chunks of 4 KiB, each with its own pattern.
var finData = func() [][]byte {
	out := make([][]byte, 1024)
	for i := range out {
		out[i] = pattern(4<<10, byte(i))
		out[i][0], out[i][1] = byte(i>>8), byte(i)
	}
	return out
}()

// finStream returns the first n chunks a finWriter's producer writes.
func finStream(n int) []byte {
	var b bytes.Buffer
	for i := range n {
		b.Write(finData[i%len(finData)])
	}
	return b.Bytes()
}

// finAfter is how many reply bytes the clients read before their FIN.
var finAfter = []int{0, 1, 64 << 10, 256 << 10}

type finResult struct {
	accepted int   // chunks AsyncWrite returned nil for, in order
	err      error // the refusal that stopped the producer
}

// finWriter starts, at a connection's first byte, a producer goroutine that
// AsyncWrites finData until the connection refuses (backing off while it is
// full) and reports how far it got under the peer's address.
type finWriter struct {
	mu      sync.Mutex
	results map[string]chan finResult
	closed  chan error
}

func (f *finWriter) result(addr string) chan finResult {
	f.mu.Lock()
	defer f.mu.Unlock()
	ch, ok := f.results[addr]
	if !ok {
		ch = make(chan finResult, 1)
		f.results[addr] = ch
	}
	return ch
}

func (f *finWriter) OnOpen(c *engine.Conn) {}

func (f *finWriter) OnData(c *engine.Conn, b []byte) {
	if c.Value() != nil {
		return
	}
	c.SetValue(true)
	ch := f.result(c.RemoteAddr().String())
	go func() {
		var r finResult
		for {
			r.err = c.AsyncWrite(finData[r.accepted%len(finData)])
			if errors.Is(r.err, engine.ErrWriteBufferFull) {
				// Nothing was accepted: a producer's back-off, then the
				// same chunk again.
				time.Sleep(50 * time.Microsecond)
				continue
			}
			if r.err != nil {
				break
			}
			r.accepted++
		}
		ch <- r
	}()
}

func (f *finWriter) OnClose(c *engine.Conn, err error) { f.closed <- err }

// finWriterHC keeps the connection open at the peer's FIN and closes it from
// OnReadClosed.
type finWriterHC struct{ *finWriter }

func (f finWriterHC) OnReadClosed(c *engine.Conn) { _ = c.Close() }

// finClient sends one byte, reads after bytes of the reply and half-closes,
// reads to EOF and checks it got exactly the chunks the server's producer
// had accepted, and that the producer stopped because the connection closed.
func finClient(addr string, f *finWriter, after int) error {
	conn, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		return err
	}
	defer conn.Close()
	if err := conn.SetDeadline(time.Now().Add(30 * time.Second)); err != nil {
		return err
	}
	if _, err := conn.Write([]byte{1}); err != nil {
		return err
	}
	got := make([]byte, after)
	if _, err := io.ReadFull(conn, got); err != nil {
		return fmt.Errorf("the first %d reply bytes: %w", after, err)
	}
	if err := conn.(*net.TCPConn).CloseWrite(); err != nil {
		return err
	}
	rest, err := io.ReadAll(conn)
	if err != nil {
		return fmt.Errorf("reading to EOF after %d bytes: %w", len(got)+len(rest), err)
	}
	got = append(got, rest...)

	var r finResult
	select {
	case r = <-f.result(conn.LocalAddr().String()):
	case <-time.After(30 * time.Second):
		return errors.New("the producer never stopped")
	}
	if !errors.Is(r.err, engine.ErrConnClosed) {
		return fmt.Errorf("AsyncWrite refused with %v, want ErrConnClosed", r.err)
	}
	want := finStream(r.accepted)
	if !bytes.Equal(want, got) {
		return fmt.Errorf("FIN after %d bytes: got %d bytes, AsyncWrite accepted %d%s",
			after, len(got), len(want), firstDiff(want, got))
	}
	return nil
}

// firstDiff describes where got first departs from want.
func firstDiff(want, got []byte) string {
	for i := range min(len(want), len(got)) {
		if want[i] != got[i] {
			return fmt.Sprintf("; first difference at byte %d", i)
		}
	}
	return ""
}

// TestAsyncWriteBackpressure: against a peer that never reads, AsyncWrite
// fails fast with ErrWriteBufferFull once the connection holds its limit,
// Writable turns false where the producer can see it, and every byte that
// was accepted arrives once the peer reads.
func TestAsyncWriteBackpressure(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		l := newLoop(t, c)
		const limit, chunk = 512 << 10, 16 << 10
		r := newRecorder()
		_, peer := acceptOne(t, l, r, engine.WithSocketOptions(engine.SocketOptions{SendBuffer: 32 << 10, RecvBuffer: 32 << 10}), engine.WithBufferLimits(engine.BufferLimits{AsyncWrite: limit}))
		require.NoError(t, peer.(*net.TCPConn).SetReadBuffer(32<<10))
		conn := <-r.opened

		var accepted bytes.Buffer
		full := false
		sawUnwritable := false
		for i := 0; i < 4096 && !full; i++ { // 64 MiB at most: far past any socket buffer
			p := pattern(chunk, byte(i))
			switch err := conn.AsyncWrite(p); {
			case err == nil:
				accepted.Write(p)
			case errors.Is(err, engine.ErrWriteBufferFull):
				require.ErrorIs(t, err, tasks.ErrRejected)
				full = true
			default:
				t.Fatalf("AsyncWrite: %v", err)
			}
			if !conn.Writable() {
				sawUnwritable = true
			}
		}
		require.True(t, full, "AsyncWrite never pushed back (accepted %d bytes)", accepted.Len())
		testenv.Eventually(t, 10*time.Second, "Writable false off the loop", func() bool {
			sawUnwritable = sawUnwritable || !conn.Writable()
			return sawUnwritable
		})

		// The peer reads: exactly the accepted bytes come, in order, and
		// the connection turns writable again.
		_ = peer.SetReadDeadline(time.Now().Add(30 * time.Second))
		got := make([]byte, accepted.Len())
		_, err := io.ReadFull(peer, got)
		require.NoError(t, err)
		require.True(t, bytes.Equal(accepted.Bytes(), got), "accepted bytes differ from those received")
		testenv.Eventually(t, 10*time.Second, "Writable again", conn.Writable)
		require.NoError(t, conn.AsyncWrite([]byte("more")))
		require.NoError(t, conn.Close())
		require.NoError(t, waitErr(t, r.closed))
	})
}

// stuckPeer accepts a connection whose peer never reads, fills its socket
// buffers and leaves bytes pending in the connection.
func stuckPeer(t *testing.T, l *engine.Loop, r *recorder, opts ...engine.ConnOption) (*engine.Conn, net.Conn) {
	t.Helper()
	opts = append([]engine.ConnOption{engine.WithSocketOptions(engine.SocketOptions{SendBuffer: 16 << 10, RecvBuffer: 16 << 10})}, opts...)
	_, peer := acceptOne(t, l, r, opts...)
	require.NoError(t, peer.(*net.TCPConn).SetReadBuffer(16<<10))
	conn := <-r.opened
	pending := make(chan int, 1)
	require.NoError(t, l.Execute(tasks.Func(func() { _, _ = conn.Write(make([]byte, 8<<20)); pending <- conn.Buffered() })))
	require.Positive(t, <-pending)
	return conn, peer
}

// TestCloseTimeoutAbortsStuckClose: Close against a peer that never reads
// ends at the close timeout: the connection is aborted, OnClose reports
// ErrCloseTimeout (an ErrAborted) and the fd is released.
func TestCloseTimeoutAbortsStuckClose(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		l := newLoop(t, c)
		r := newRecorder()
		conn, peer := stuckPeer(t, l, r, engine.WithTimeouts(engine.Timeouts{Close: 100 * time.Millisecond}))
		require.NoError(t, conn.Close())
		err := waitErr(t, r.closed)
		require.ErrorIs(t, err, engine.ErrCloseTimeout)
		require.ErrorIs(t, err, engine.ErrAborted)
		// The peer sees the end (a reset, after what was sent).
		_ = peer.SetReadDeadline(time.Now().Add(30 * time.Second))
		_, err = io.Copy(io.Discard, peer)
		var ne net.Error
		require.False(t, errors.As(err, &ne) && ne.Timeout(), "the peer never saw the close: %v", err)
		testenv.Eventually(t, 10*time.Second, "slot released", func() bool { return l.Metrics().Registered == 1 })
	})
}

// TestAbortWhileClosingReportsAborted: Abort on a connection whose graceful
// close is still flushing reports ErrAborted, not the close's reason.
func TestAbortWhileClosingReportsAborted(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		l := newLoop(t, c)
		r := newRecorder()
		conn, _ := stuckPeer(t, l, r)
		require.NoError(t, conn.Close())
		require.NoError(t, conn.Abort())
		err := waitErr(t, r.closed)
		require.ErrorIs(t, err, engine.ErrAborted)
		require.NotErrorIs(t, err, engine.ErrCloseTimeout)
	})
}

// panicky panics in the callback named where, and counts the others.
type panicky struct {
	where  string
	closed chan error
	opened atomic.Int32
}

func (p *panicky) maybe(where string) {
	if p.where == where {
		panic("boom in " + where)
	}
}

func (p *panicky) OnOpen(c *engine.Conn) {
	p.opened.Add(1)
	p.maybe("OnOpen")
}

func (p *panicky) OnData(c *engine.Conn, b []byte) {
	p.maybe("OnData")
	_, _ = c.Write(b)
}

func (p *panicky) OnClose(c *engine.Conn, err error) {
	p.closed <- err
	p.maybe("OnClose")
}

func (p *panicky) OnReadClosed(c *engine.Conn) {
	p.maybe("OnReadClosed")
	_ = c.Close()
}

func (p *panicky) OnIdle(c *engine.Conn, k engine.IdleKind) { p.maybe("OnIdle") }

func (p *panicky) OnWritabilityChanged(c *engine.Conn, w bool) { p.maybe("OnWritabilityChanged") }

// TestCallbackPanicEndsOnlyItsConnection: a panic in any callback closes
// that connection cleanly (OnClose with ErrPanicked, the peer sees the
// close, fd and slot released); the loop serves the next connection.
func TestCallbackPanicEndsOnlyItsConnection(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		for _, where := range []string{"OnOpen", "OnData", "OnReadClosed", "OnIdle", "OnWritabilityChanged", "OnClose"} {
			t.Run(where, func(t *testing.T) {
				testenv.CheckLeaks(t)
				l := newLoop(t, c, engine.WithLogger(discardLogger()))
				h := &panicky{where: where, closed: make(chan error, 1)}
				opts := []engine.ConnOption{engine.WithBufferLimits(engine.BufferLimits{LowWatermark: 1, HighWatermark: 1})}
				if where == "OnIdle" {
					opts = append(opts, engine.WithTimeouts(engine.Timeouts{ReadIdle: 20 * time.Millisecond}))
				}
				_, peer := acceptOne(t, l, h, opts...)
				switch where {
				case "OnData", "OnWritabilityChanged":
					_, err := peer.Write([]byte("hello"))
					require.NoError(t, err)
				case "OnReadClosed", "OnClose":
					require.NoError(t, peer.(*net.TCPConn).CloseWrite())
				}
				err := waitErr(t, h.closed)
				if where == "OnClose" {
					require.NoError(t, err) // the panic comes after OnClose
				} else {
					require.ErrorIs(t, err, tasks.ErrPanicked)
					require.ErrorContains(t, err, where)
				}
				_ = peer.SetReadDeadline(time.Now().Add(30 * time.Second))
				_, _ = io.Copy(io.Discard, peer) // returns at the close (EOF or reset)
				testenv.Eventually(t, 10*time.Second, "slot released", func() bool { return l.Metrics().Registered == 1 })
				require.EqualValues(t, 1, l.Metrics().Panics)

				// The loop goes on: a plain echo on it works.
				require.NoError(t, pingPong(listenEcho(t, l).Addr().String(), 3, 100, 9))
			})
		}
	})
}

// TestServerShutdownHonoursContext: Shutdown whose context ends while a
// connection cannot finish closing (its peer never reads) aborts it and
// returns the context's error, with the connection gone.
func TestServerShutdownHonoursContext(t *testing.T) {
	testenv.ForEachBackend(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		g, err := loopgroup.New(loopgroup.WithLoops(2), loopgroup.WithEngineOptions(c.Options()...))
		require.NoError(t, err)
		defer func() { require.NoError(t, g.Close()) }()
		srv, err := loopgroup.Serve(g, "tcp", "127.0.0.1:0", &bulkWriter{size: 8 << 20},
			loopgroup.WithConnOptions(engine.WithSocketOptions(engine.SocketOptions{SendBuffer: 16 << 10, RecvBuffer: 16 << 10}), engine.WithTimeouts(engine.Timeouts{Close: time.Hour})))
		require.NoError(t, err)
		peer, err := net.Dial("tcp", srv.Addr().String())
		require.NoError(t, err)
		defer peer.Close()
		require.NoError(t, peer.(*net.TCPConn).SetReadBuffer(16<<10))
		testenv.Eventually(t, 10*time.Second, "connection counted", func() bool { return srv.Connections() == 1 })

		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		err = srv.Shutdown(ctx)
		require.ErrorIs(t, err, context.DeadlineExceeded)
		require.Zero(t, srv.Connections())
		_ = peer.SetReadDeadline(time.Now().Add(30 * time.Second))
		_, err = io.Copy(io.Discard, peer)
		var ne net.Error
		require.False(t, errors.As(err, &ne) && ne.Timeout(), "the peer never saw the abort: %v", err)
	})
}

// bulkWriter writes size bytes as soon as a connection opens.
type bulkWriter struct{ size int }

func (b *bulkWriter) OnOpen(c *engine.Conn)       { _, _ = c.Write(make([]byte, b.size)) }
func (b *bulkWriter) OnData(*engine.Conn, []byte) {}
func (b *bulkWriter) OnClose(*engine.Conn, error) {}

// TestAsyncWriteSteadyStateAllocs: once its buffers have grown, AsyncWrite
// allocates nothing (AllocsPerRun averages, so a rare growth of a buffer
// while the loop lags does not count).
func TestAsyncWriteSteadyStateAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	testenv.ForEachBackend(t, func(t *testing.T, c testenv.Combo) {
		l := newLoop(t, c)
		r := newRecorder()
		_, peer := acceptOne(t, l, r)
		conn := <-r.opened
		go func() { _, _ = io.Copy(io.Discard, peer) }()
		p := make([]byte, 64)
		for range 1000 {
			require.NoError(t, conn.AsyncWrite(p))
		}
		allocs := testing.AllocsPerRun(2000, func() { _ = conn.AsyncWrite(p) })
		require.Zero(t, allocs, "AsyncWrite allocates in steady state")
	})
}

// TestServerCloseEndsStuckClose: Server.Close against a peer that never
// reads returns once the connection's close timeout aborted it, with the
// connection gone.
func TestServerCloseEndsStuckClose(t *testing.T) {
	testenv.ForEachBackend(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		g, err := loopgroup.New(loopgroup.WithLoops(2), loopgroup.WithEngineOptions(c.Options()...))
		require.NoError(t, err)
		defer func() { require.NoError(t, g.Close()) }()
		srv, err := loopgroup.Serve(g, "tcp", "127.0.0.1:0", &bulkWriter{size: 8 << 20},
			loopgroup.WithConnOptions(engine.WithSocketOptions(engine.SocketOptions{SendBuffer: 16 << 10, RecvBuffer: 16 << 10}), engine.WithTimeouts(engine.Timeouts{Close: 100 * time.Millisecond})))
		require.NoError(t, err)
		peer, err := net.Dial("tcp", srv.Addr().String())
		require.NoError(t, err)
		defer peer.Close()
		require.NoError(t, peer.(*net.TCPConn).SetReadBuffer(16<<10))
		testenv.Eventually(t, 10*time.Second, "connection counted", func() bool { return srv.Connections() == 1 })
		require.NoError(t, srv.Close())
		require.Zero(t, srv.Connections())
	})
}
