package tests

// Regression tests for the loop-lifecycle faults of issue #16: waiting on a
// loop from the loop, optional handler interfaces under loopgroup, accept
// errors, runtime.Goexit in tasks and handlers.

import (
	"context"
	"io"
	"log/slog"
	"math/bits"
	"net"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/internal/testenv"
	"github.com/ringloop/ringloop/internal/uringcheck"
	"github.com/ringloop/ringloop/loopgroup"
	"github.com/ringloop/ringloop/tasks"
)

// lifeWait is how long these tests wait for something that must happen.
const lifeWait = 20 * time.Second

// recv waits for one value from ch or fails.
func recv[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(lifeWait):
		t.Fatalf("timed out after %v waiting for %s", lifeWait, what)
		var zero T
		return zero
	}
}

// TestLoopWaitsOnItselfFromHandler: a handler may start its loop's shutdown,
// but waiting for it there returns ErrDeadlock at once (it used to block the
// loop forever); the shutdown then completes.
func TestLoopWaitsOnItselfFromHandler(t *testing.T) {
	waits := []struct {
		name string
		wait func(l *engine.Loop) error
	}{
		{"Close", (*engine.Loop).Close},
		{"Shutdown", func(l *engine.Loop) error { return l.Shutdown(context.Background()) }},
		{"ShutdownGracefully+Shutdown", func(l *engine.Loop) error {
			if err := l.ShutdownGracefully(0, time.Second); err != nil {
				return err
			}
			return l.Shutdown(context.Background())
		}},
	}
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		for _, w := range waits {
			t.Run(w.name, func(t *testing.T) {
				testenv.CheckLeaks(t)
				l, err := engine.New(c.Options()...)
				require.NoError(t, err)
				got := make(chan error, 1)
				r := newRecorder()
				r.onData = func(conn *engine.Conn, _ []byte) { got <- w.wait(conn.Loop()) }
				ln, peer := acceptOne(t, l, r)
				_, err = peer.Write([]byte("x"))
				require.NoError(t, err)
				require.ErrorIs(t, recv(t, got, "the wait to return"), tasks.ErrDeadlock)
				recv(t, l.Done(), "the shutdown started on the loop to complete")
				require.ErrorIs(t, waitErr(t, r.closed), engine.ErrShutdown)
				require.ErrorIs(t, l.Execute(tasks.Func(func() {})), engine.ErrShutdown)
				ctx, cancel := context.WithTimeout(context.Background(), lifeWait)
				defer cancel()
				_, err = ln.Closed().Await(ctx)
				require.NoError(t, err, "the listener closed with the loop")
			})
		}
	})
}

// TestServerClosedFromHandler: Server.Close and Server.Shutdown called from a
// handler return ErrCalledFromLoop at once instead of stalling the loop
// (Close used to wait five seconds for connections its own loop had to
// close, then fail with ErrConnsLeft); the close goes on and completes.
func TestServerClosedFromHandler(t *testing.T) {
	stops := []struct {
		name string
		stop func(s *loopgroup.Server) error
	}{
		{"Close", (*loopgroup.Server).Close},
		{"Shutdown", func(s *loopgroup.Server) error { return s.Shutdown(context.Background()) }},
	}
	testenv.ForEachBackend(t, func(t *testing.T, c testenv.Combo) {
		for _, st := range stops {
			t.Run(st.name, func(t *testing.T) {
				testenv.CheckLeaks(t)
				g := newGroup(t, c, 2)
				var srv *loopgroup.Server
				ready := make(chan struct{})
				got := make(chan error, 1)
				r := newRecorder()
				r.onData = func(conn *engine.Conn, b []byte) {
					<-ready
					if string(b) == "stop" {
						got <- st.stop(srv)
					}
				}
				srv, err := loopgroup.Serve(g, "tcp", "127.0.0.1:0", r)
				require.NoError(t, err)
				close(ready)
				peer, err := net.Dial("tcp", srv.Addr().String())
				require.NoError(t, err)
				defer peer.Close()
				recv(t, r.opened, "OnOpen")
				_, err = peer.Write([]byte("stop"))
				require.NoError(t, err)
				err = recv(t, got, "the server call to return")
				require.ErrorIs(t, err, loopgroup.ErrCalledFromLoop)
				require.ErrorIs(t, err, tasks.ErrDeadlock)
				if st.name == "Close" {
					// Close goes on in the background: the connection
					// closes and the port stops accepting.
					require.NoError(t, waitErr(t, r.closed))
					_ = peer.SetReadDeadline(time.Now().Add(lifeWait))
					_, err = io.ReadAll(peer)
					require.NoError(t, err)
				} else {
					// Shutdown waits in the background for the
					// connection to end by itself.
					require.NoError(t, peer.Close())
					require.ErrorIs(t, waitErr(t, r.closed), io.EOF)
				}
				testenv.Eventually(t, lifeWait, "no live connection", func() bool { return srv.Connections() == 0 })
				testenv.Eventually(t, lifeWait, "listener closed", func() bool {
					c, err := net.Dial("tcp", srv.Addr().String())
					if err == nil {
						c.Close()
					}
					return err != nil
				})
			})
		}
	})
}

// TestGroupWaitsOnItselfFromLoop: Shutdown and Close from one of the group's
// loops start the shutdown and return ErrCalledFromLoop, an ErrDeadlock, at
// once (waiting there used to block that loop, and so the group's
// termination, forever); the group then terminates.
func TestGroupWaitsOnItselfFromLoop(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		g := newGroup(t, c, 2)
		ctx, cancel := context.WithTimeout(context.Background(), lifeWait)
		defer cancel()
		errs, err := engine.Submit(g.Loops()[1], func() ([2]error, error) {
			return [2]error{g.Shutdown(context.Background()), g.Close()}, nil
		}).Await(ctx)
		require.NoError(t, err)
		for i, err := range errs {
			require.ErrorIs(t, err, loopgroup.ErrCalledFromLoop, "wait %d", i)
			require.ErrorIs(t, err, tasks.ErrDeadlock, "wait %d", i)
		}
		recv(t, g.Done(), "the shutdown started on a loop to complete")
		require.Equal(t, engine.Terminated, g.State())
	})
}

// newGroup builds a group of n loops for combo c, closed at cleanup.
func newGroup(t *testing.T, c testenv.Combo, n int) *loopgroup.Group {
	t.Helper()
	g, err := loopgroup.New(loopgroup.WithLoops(n), loopgroup.WithEngineOptions(c.Options()...))
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, g.Close()) })
	return g
}

// extHandler implements the optional IdleHandler and HalfCloseHandler: it
// reports idle events and answers a peer's half-close with what it read.
type extHandler struct {
	*recorder
	idle chan engine.IdleKind
}

func newExtHandler() extHandler { return extHandler{newRecorder(), make(chan engine.IdleKind, 64)} }

func (h extHandler) OnIdle(_ *engine.Conn, k engine.IdleKind) {
	select {
	case h.idle <- k:
	default: // never block the loop
	}
}

func (h extHandler) OnReadClosed(c *engine.Conn) {
	_, _ = c.Write([]byte("got " + string(h.bytes())))
	_ = c.Close()
}

// TestGroupKeepsOptionalHandlerInterfaces: under every reactor model of
// loopgroup.Serve and under Group.Dial, a handler's OnIdle is called (instead of
// the connection being closed with ErrIdleTimeout) and a reply after the
// peer's half-close arrives; the connection is still counted.
func TestGroupKeepsOptionalHandlerInterfaces(t *testing.T) {
	idle := loopgroup.WithConnOptions(engine.WithTimeouts(engine.Timeouts{ReadIdle: 30 * time.Millisecond}))
	models := []struct {
		name  string
		loops int
		opts  func(t *testing.T, c testenv.Combo) []loopgroup.ServerOption
	}{
		{"single", 1, func(*testing.T, testenv.Combo) []loopgroup.ServerOption { return nil }},
		{"multi", 2, func(*testing.T, testenv.Combo) []loopgroup.ServerOption { return nil }},
		{"main-sub", 2, func(t *testing.T, c testenv.Combo) []loopgroup.ServerOption {
			return []loopgroup.ServerOption{loopgroup.WithBoss(newGroup(t, c, 1))}
		}},
		{"reuse-port", 2, func(*testing.T, testenv.Combo) []loopgroup.ServerOption {
			return []loopgroup.ServerOption{loopgroup.WithListenerPerLoop()}
		}},
	}
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		for _, m := range models {
			t.Run(m.name, func(t *testing.T) {
				testenv.CheckLeaks(t)
				g := newGroup(t, c, m.loops)
				h := newExtHandler()
				srv, err := loopgroup.Serve(g, "tcp", "127.0.0.1:0", h, append(m.opts(t, c), idle)...)
				require.NoError(t, err)
				defer func() { require.NoError(t, srv.Close()) }()
				peer, err := net.Dial("tcp", srv.Addr().String())
				require.NoError(t, err)
				defer peer.Close()
				recv(t, h.opened, "OnOpen")
				require.Equal(t, engine.ReadIdle, recv(t, h.idle, "OnIdle"))
				require.Equal(t, 1, srv.Connections())
				_, err = peer.Write([]byte("request"))
				require.NoError(t, err)
				require.NoError(t, peer.(*net.TCPConn).CloseWrite())
				_ = peer.SetReadDeadline(time.Now().Add(lifeWait))
				got, err := io.ReadAll(peer)
				require.NoError(t, err)
				require.Equal(t, "got request", string(got))
				require.NoError(t, waitErr(t, h.closed))
				testenv.Eventually(t, lifeWait, "uncounted", func() bool { return srv.Connections() == 0 && groupConns(g) == 0 })
			})
		}
		t.Run("dial", func(t *testing.T) {
			testenv.CheckLeaks(t)
			g := newGroup(t, c, 2)
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			require.NoError(t, err)
			defer ln.Close()
			h := newExtHandler()
			ctx, cancel := context.WithTimeout(context.Background(), lifeWait)
			defer cancel()
			conn, err := g.Dial(ctx, "tcp", ln.Addr().String(), h, engine.WithTimeouts(engine.Timeouts{ReadIdle: 30 * time.Millisecond}))
			require.NoError(t, err)
			peer, err := ln.Accept()
			require.NoError(t, err)
			defer peer.Close()
			require.Equal(t, engine.ReadIdle, recv(t, h.idle, "OnIdle"))
			require.Equal(t, 1, g.Connections(conn.Loop()))
			_, err = peer.Write([]byte("request"))
			require.NoError(t, err)
			require.NoError(t, peer.(*net.TCPConn).CloseWrite())
			_ = peer.SetReadDeadline(time.Now().Add(lifeWait))
			got, err := io.ReadAll(peer)
			require.NoError(t, err)
			require.Equal(t, "got request", string(got))
			require.NoError(t, waitErr(t, h.closed))
			testenv.Eventually(t, lifeWait, "uncounted", func() bool { return groupConns(g) == 0 })
		})
	})
}

func groupConns(g *loopgroup.Group) int {
	n := 0
	for _, l := range g.Loops() {
		n += g.Connections(l)
	}
	return n
}

// TestTaskGoexitLoopGoesOn: a task calling runtime.Goexit (as t.FailNow
// does) used to end the loop goroutine silently, leaving the loop "started"
// with tasks that never ran. The loop goes on, on its own thread, and
// counts it with the panics.
func TestTaskGoexitLoopGoesOn(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		logs := &logCapture{}
		l := newLoop(t, c, engine.WithLogger(slog.New(logs)))
		ln := listenEcho(t, l)
		ctx, cancel := context.WithTimeout(context.Background(), lifeWait)
		defer cancel()
		tid, err := engine.Submit(l, func() (int, error) { return l.ThreadID(), nil }).Await(ctx)
		require.NoError(t, err)
		const exits = 3
		for range exits {
			require.NoError(t, l.Execute(tasks.Func(runtime.Goexit)))
		}
		onLoop, err := engine.Submit(l, func() (bool, error) { return l.InEventLoop(), nil }).Await(ctx)
		require.NoError(t, err, "a task queued after the Goexits runs")
		require.True(t, onLoop)
		require.Equal(t, tid, l.ThreadID(), "the loop keeps its thread")
		require.Equal(t, engine.Started, l.State())
		require.EqualValues(t, exits, l.Metrics().Panics)
		require.NoError(t, pingPong(ln.Addr().String(), 3, 100, 7), "connections are served")
		require.Equal(t, exits, countLines(logs, "a task called runtime.Goexit; the loop goes on"))
	})
}

// TestHandlerGoexitShutsLoopDown: runtime.Goexit in a handler leaves the
// driver's completion batch unfinished, so the loop cannot go on: it shuts
// down cleanly (connections closed, fds released, termination completes)
// and refuses work with ErrShutdown, where it used to hang "started".
func TestHandlerGoexitShutsLoopDown(t *testing.T) {
	testenv.ForEachParallel(t, func(t *testing.T, c testenv.Combo) {
		logs := &logCapture{}
		l, err := engine.New(c.Options(engine.WithLogger(slog.New(logs)))...)
		require.NoError(t, err)
		r := newRecorder()
		r.opened, r.closed = make(chan *engine.Conn, 2), make(chan error, 2)
		r.onData = func(*engine.Conn, []byte) { runtime.Goexit() }
		_, peer := acceptOne(t, l, r)
		other, err := net.Dial("tcp", peer.RemoteAddr().String())
		require.NoError(t, err)
		defer other.Close()
		// Both accepted before the Goexit: one still in the listen backlog
		// when the listener closes is reset by the kernel, not closed.
		recv(t, r.opened, "OnOpen")
		recv(t, r.opened, "OnOpen")
		_, err = peer.Write([]byte("x"))
		require.NoError(t, err)
		recv(t, l.Done(), "the loop to shut itself down")
		require.ErrorIs(t, waitErr(t, r.closed), engine.ErrShutdown)
		require.ErrorIs(t, l.Execute(tasks.Func(func() {})), engine.ErrShutdown)
		for _, p := range []net.Conn{peer, other} {
			_ = p.SetReadDeadline(time.Now().Add(lifeWait))
			_, err = io.ReadAll(p)
			require.NoError(t, err, "the peer sees the close")
		}
		require.Equal(t, 1, countLines(logs, "a handler called runtime.Goexit"))
	})
}

// countLines counts the captured log lines that contain s.
func countLines(h *logCapture, s string) int {
	n := 0
	for _, l := range h.lines() {
		if strings.Contains(l, s) {
			n++
		}
	}
	return n
}

// limitFDs lowers RLIMIT_NOFILE so that only spare more descriptors can be
// made (descriptors below the lowest free one are all in use), and returns a
// function that restores it (also run at cleanup).
func limitFDs(t *testing.T, spare int) (restore func()) {
	t.Helper()
	var old unix.Rlimit
	require.NoError(t, unix.Getrlimit(unix.RLIMIT_NOFILE, &old))
	free, err := unix.Dup(0)
	require.NoError(t, err)
	require.NoError(t, unix.Close(free))
	lim := unix.Rlimit{Cur: uint64(free + spare), Max: old.Max}
	require.NoError(t, unix.Setrlimit(unix.RLIMIT_NOFILE, &lim))
	done := false
	restore = func() {
		if !done {
			done = true
			require.NoError(t, unix.Setrlimit(unix.RLIMIT_NOFILE, &old))
		}
	}
	t.Cleanup(restore)
	return restore
}

// TestAcceptErrorsBackOff: with the fd table full (EMFILE), the listener
// backs off (5 ms doubling to 1 s) instead of retrying every 10 ms, logs at
// most a line a second, counts the errors in Metrics, and serves the waiting
// connections once descriptors are free again. Every kernel profile: the
// accept is single-shot before 5.19 and multishot after.
func TestAcceptErrorsBackOff(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		logs := &logCapture{}
		l := newLoop(t, c, engine.WithLogger(slog.New(logs)))
		require.NoError(t, engine.Submit(l, func() (struct{}, error) { return struct{}{}, nil }).Err()) // start it
		// Enough waiting clients that descriptors freed late elsewhere in
		// the process (a hole between two fills an accept takes) cannot
		// serve them all before six accepts have failed.
		const n = 12
		socks := make([]int, n)
		for i := range socks {
			fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
			require.NoError(t, err)
			socks[i] = fd
		}
		// On failure too, the clients close: nothing waits on them.
		t.Cleanup(func() {
			for _, fd := range socks {
				if fd >= 0 {
					unix.Close(fd)
				}
			}
		})
		// Room for the listening socket and some slack (a descriptor another
		// goroutine takes meanwhile); the fill below takes the rest. The limit
		// is set before Listen: io_uring's multishot accept reads it when it
		// is armed.
		restore := limitFDs(t, 8)
		ln := listenEcho(t, l)
		// A descriptor closed after limitFDs (a parked io_uring loop of an
		// earlier test releases its sockets a moment after Close) leaves a
		// hole below the limit an accept would take: fill every hole now and
		// at each poll, so the accepts keep failing.
		var fillers []int
		fill := func() {
			for {
				fd, err := unix.Dup(0)
				if err != nil {
					return
				}
				fillers = append(fillers, fd)
			}
		}
		unfill := func() {
			for _, fd := range fillers {
				unix.Close(fd)
			}
			fillers = nil
		}
		t.Cleanup(unfill)
		fill()
		_, err := unix.Dup(0)
		require.ErrorIs(t, err, unix.EMFILE, "the fd table is full")
		sa := &unix.SockaddrInet4{Port: ln.Addr().(*net.TCPAddr).Port, Addr: [4]byte{127, 0, 0, 1}}
		start := time.Now()
		for _, fd := range socks {
			require.NoError(t, unix.Connect(fd, sa)) // the kernel completes it: the backlog
		}
		for deadline := time.Now().Add(lifeWait); ; time.Sleep(time.Millisecond) {
			fill()
			m := l.Metrics()
			if m.AcceptErrors >= 6 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("no 6 accept errors within %v: %d errors, %d of %d clients accepted into freed descriptors", lifeWait, m.AcceptErrors, m.Connections, n)
			}
		}
		m := l.Metrics()
		errs, served := m.AcceptErrors, m.Connections
		elapsed := time.Since(start)
		unfill()
		restore()
		lines := countLines(logs, "accept failed; retrying after a back-off")
		t.Logf("%d accept errors in %v, %d log lines, %d accepted into holes", errs, elapsed, lines, served)
		// Back-off: error k+1 comes 5 ms × (2^k - 1) after the first, so a
		// run of errors holds at most 1 + log2(elapsed/5ms + 1); an accept
		// that got a descriptor meanwhile resets the back-off and starts a
		// new run. A fixed 10 ms retry makes six in 50 ms.
		perRun := bits.Len64(uint64(elapsed/(5*time.Millisecond)) + 1)
		require.LessOrEqual(t, int(errs), (1+served)*perRun, "%d errors in %v", errs, elapsed)
		// Rate-limited log: a line at the first error, then one a second.
		require.LessOrEqual(t, lines, 1+int(elapsed/time.Second)+1)
		require.GreaterOrEqual(t, lines, 1)
		// The logged error reads as net's: "accept tcp 127.0.0.1:P: accept:
		// too many open files".
		acceptErr, _ := logs.attr("accept failed; retrying after a back-off", "err").(error)
		var oe *net.OpError
		require.ErrorAs(t, acceptErr, &oe, "the logged accept error is a *net.OpError")
		require.Equal(t, "accept", oe.Op)
		require.Equal(t, "tcp", oe.Net)
		require.Equal(t, ln.Addr().String(), oe.Addr.String())
		require.ErrorIs(t, acceptErr, unix.EMFILE)
		require.Equal(t, "accept tcp "+ln.Addr().String()+": accept: too many open files", acceptErr.Error())
		for i, fd := range socks {
			socks[i] = -1 // the file owns it now
			f := os.NewFile(uintptr(fd), "client")
			conn, err := net.FileConn(f)
			require.NoError(t, err)
			f.Close()
			echoRoundTrip(t, conn, "served")
			conn.Close()
		}
	})
}

// echoRoundTrip writes msg on conn and reads it back.
func echoRoundTrip(t *testing.T, conn net.Conn, msg string) {
	t.Helper()
	_ = conn.SetDeadline(time.Now().Add(lifeWait))
	_, err := conn.Write([]byte(msg))
	require.NoError(t, err)
	buf := make([]byte, len(msg))
	_, err = io.ReadFull(conn, buf)
	require.NoError(t, err)
	require.Equal(t, msg, string(buf))
}

// TestUringTestsGateWhereRefused: where io_uring is refused (a seccomp
// filter, as a container's), the suite's io_uring subtests skip with one
// line saying why and the epoll half runs and passes; with
// RINGLOOP_REQUIRE_URING=1 (CI) the same run fails, saying so.
func TestUringTestsGateWhereRefused(t *testing.T) {
	for _, errno := range []unix.Errno{unix.EPERM, unix.ENOSYS} {
		t.Run(unix.ErrnoName(errno), func(t *testing.T) {
			out, err := startChild(t, errno, "TestChildUringGate", []string{"-test.v"})
			require.NoError(t, err, "child failed:\n%s", out)
			require.Contains(t, out, childPassed+"TestChildUringGate", out)
			require.Contains(t, out, "--- PASS: TestChildUringGate/epoll/native", out)
			if !cgoBuild {
				return // no io_uring half to gate
			}
			require.Contains(t, out, "--- SKIP: TestChildUringGate/io_uring/native", out)
			require.Contains(t, out, "io_uring: unavailable here (io_uring_setup: "+errno.Error(), out)
			require.Contains(t, out, "io_uring tests are skipped, epoll tests run", out)

			out, err = startChild(t, errno, "TestChildUringGate", []string{"-test.v"}, uringcheck.RequireEnv+"=1")
			require.Error(t, err, "io_uring required: the child must fail:\n%s", out)
			require.Contains(t, out, "--- FAIL: TestChildUringGate/io_uring/native", out)
			require.Contains(t, out, "but "+uringcheck.RequireEnv+" requires it", out)
			require.Contains(t, out, "--- PASS: TestChildUringGate/epoll/native", out)
		})
	}
}

// TestChildUringGate is the child of TestUringTestsGateWhereRefused: a
// suite-style test over every backend.
func TestChildUringGate(t *testing.T) {
	inChild(t)
	var mu sync.Mutex
	ran := map[engine.Backend]bool{}
	testenv.ForEachBackend(t, func(t *testing.T, c testenv.Combo) {
		l := newLoop(t, c)
		_, err := engine.Submit(l, func() (struct{}, error) { return struct{}{}, nil }).Await(context.Background())
		require.NoError(t, err)
		mu.Lock()
		ran[c.Backend] = true
		mu.Unlock()
	})
	require.True(t, ran[engine.BackendEpoll], "the epoll half runs")
	require.False(t, ran[engine.BackendUring], "the io_uring half cannot run here")
}
