package websocket_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	gws "github.com/gorilla/websocket"
	"github.com/stretchr/testify/require"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/httpserver"
	"github.com/ringloop/ringloop/internal/testenv"
	"github.com/ringloop/ringloop/loopgroup"
	"github.com/ringloop/ringloop/tasks"
	"github.com/ringloop/ringloop/websocket"
)

// room puts every connection in its hub; a "leave" message takes the
// sender out, a "mark" message hands the server side to marked.
type room struct {
	hub    *websocket.Hub
	closes chan closed
	marked chan *websocket.Conn

	mu    sync.Mutex
	loops map[*engine.Loop]bool
}

// newRoom returns a room whose hub has the default limits; a test sets
// others on r.hub before the first member joins.
func newRoom() *room {
	return &room{hub: new(websocket.Hub), closes: make(chan closed, 4096), marked: make(chan *websocket.Conn, 16),
		loops: map[*engine.Loop]bool{}}
}

func (r *room) OnOpen(c *websocket.Conn) {
	r.hub.Add(c)
	r.mu.Lock()
	r.loops[c.Conn().Loop()] = true
	r.mu.Unlock()
}

func (r *room) OnMessage(c *websocket.Conn, kind websocket.MessageKind, p []byte) {
	switch string(p) {
	case "leave":
		r.hub.Remove(c)
		_ = c.WriteMessage(websocket.Text, []byte("left"))
	case "mark":
		r.marked <- c
	}
}

func (r *room) OnClose(c *websocket.Conn, code int, reason string, err error) {
	r.hub.Remove(c) // it has left by itself already: a no-op
	r.closes <- closed{code, reason, err}
}

func (r *room) loopCount() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.loops)
}

// serveGroup serves h behind UpgradeFast on a group of two loops of the combo.
func serveGroup(t *testing.T, c testenv.Combo, h websocket.Handler, opts []websocket.Option, conn ...engine.ConnOption) (*loopgroup.Group, string) {
	t.Helper()
	g, err := loopgroup.New(loopgroup.WithLoops(2), loopgroup.WithEngineOptions(c.Options()...))
	require.NoError(t, err)
	t.Cleanup(func() { _ = g.Close() })
	s, err := httpserver.NewFast(httpserver.HandlerFunc(func(w *httpserver.Response, r *httpserver.Request) {
		_ = websocket.UpgradeFast(w, r, h, opts...)
	}))
	require.NoError(t, err)
	a, err := s.Listen(g, "tcp", "127.0.0.1:0", loopgroup.WithConnOptions(conn...))
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return g, a.String()
}

// seqPayload is broadcast i: its number then a filler of a length that
// varies with i (ASCII, so valid as text too).
func seqPayload(i int) []byte {
	p := fmt.Appendf(nil, "%06d:", i)
	return append(p, bytes.Repeat([]byte{'a' + byte(i%26)}, (i*37)%300)...)
}

// seqOf reads a payload's number back.
func seqOf(p []byte) int {
	var n int
	if _, err := fmt.Sscanf(string(p), "%06d:", &n); err != nil {
		return -1
	}
	return n
}

func kindOf(i int) websocket.MessageKind {
	if i%2 == 0 {
		return websocket.Text
	}
	return websocket.Binary
}

// TestHubBroadcast: a hub over two loops with 200 raw clients and 8
// gorilla clients that negotiated compression: every client gets every
// broadcast, byte-exact and in order, whether sent from a goroutine or
// from either loop, and the caller may overwrite its buffer at once.
func TestHubBroadcast(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		r := newRoom()
		g, addr := serveGroup(t, c, r, []websocket.Option{websocket.WithCompression(true)})
		const raws, gorillas, n = 200, 8, 60
		rcs := make([]*rawConn, raws)
		for i := range rcs {
			rcs[i] = dialRaw(t, addr)
		}
		gcs := make([]*gws.Conn, gorillas)
		for i := range gcs {
			d := gws.Dialer{HandshakeTimeout: 30 * time.Second, EnableCompression: true}
			ws, resp, err := d.Dial("ws://"+addr+"/room", nil)
			require.NoError(t, err)
			require.Contains(t, resp.Header.Get("Sec-WebSocket-Extensions"), "permessage-deflate")
			t.Cleanup(func() { ws.Close() })
			_ = ws.SetReadDeadline(time.Now().Add(60 * time.Second))
			gcs[i] = ws
		}
		testenv.Eventually(t, 30*time.Second, "every client in the hub", func() bool { return r.hub.Len() == raws+gorillas })
		require.Equal(t, 2, r.loopCount(), "members on both loops")

		for i := range n {
			p := seqPayload(i)
			if i%3 == 1 {
				done := make(chan error, 1)
				require.NoError(t, g.Loops()[i%2].Execute(tasks.Func(func() { done <- r.hub.Broadcast(kindOf(i), p) })))
				require.NoError(t, <-done)
			} else {
				require.NoError(t, r.hub.Broadcast(kindOf(i), p))
			}
			for j := range p {
				p[j] = '#' // the hub took a copy
			}
		}
		for k, rc := range rcs {
			for i := range n {
				f, err := rc.read()
				require.NoError(t, err, "raw client %d, message %d", k, i)
				require.Equal(t, byte(0x80|kindOf(i)), f.b0, "raw client %d, message %d", k, i)
				require.True(t, bytes.Equal(seqPayload(i), f.payload), "raw client %d, message %d: %q", k, i, f.payload)
			}
		}
		for k, ws := range gcs {
			for i := range n {
				kind, p, err := ws.ReadMessage()
				require.NoError(t, err, "gorilla client %d, message %d", k, i)
				require.Equal(t, int(kindOf(i)), kind)
				require.True(t, bytes.Equal(seqPayload(i), p), "gorilla client %d, message %d: %q", k, i, p)
			}
		}
		require.Zero(t, r.hub.Stats().Dropped)
		require.ErrorContains(t, r.hub.Broadcast(websocket.MessageKind(9), nil), "kind")
	})
}

// smallPayload is broadcast i in 7 bytes.
func smallPayload(i int) []byte { return fmt.Appendf(nil, "%06d:", i) }

// broadcastAll broadcasts numbers from to to-1, 7 bytes each, waiting out
// ErrHubBacklog (the loops catch up). A client holds 9 KB per thousand:
// far under the high watermark, so none is missed however late its
// reader runs.
func broadcastAll(h *websocket.Hub, from, to int) error {
	deadline := time.Now().Add(60 * time.Second)
	for i := from; i < to; i++ {
		p := smallPayload(i)
		err := h.Broadcast(websocket.Binary, p)
		for errors.Is(err, websocket.ErrHubBacklog) && time.Now().Before(deadline) {
			runtime.Gosched()
			err = h.Broadcast(websocket.Binary, p)
		}
		if err != nil {
			return fmt.Errorf("broadcast %d: %w", i, err)
		}
	}
	return nil
}

// reader collects the numbers of the broadcasts a raw client reads, until
// its connection ends.
type reader struct {
	rc   *rawConn
	mu   sync.Mutex
	seqs []int
	left bool  // the server answered "leave"
	err  error // why the read loop ended (nil while it runs)
	done chan struct{}
}

func startReader(rc *rawConn) *reader {
	rd := &reader{rc: rc, done: make(chan struct{})}
	go func() {
		defer close(rd.done)
		for {
			f, err := rc.read()
			if err != nil || f.b0 == finClose {
				rd.mu.Lock()
				rd.err = fmt.Errorf("read loop ended after %d messages: %v (close frame: %v)", len(rd.seqs), err, err == nil)
				rd.mu.Unlock()
				return
			}
			rd.mu.Lock()
			if string(f.payload) == "left" {
				rd.left = true
			} else {
				rd.seqs = append(rd.seqs, seqOf(f.payload))
			}
			rd.mu.Unlock()
		}
	}()
	return rd
}

// state says how far the reader got and, if its read loop ended, why: what
// a test that waited for it in vain reports.
func (rd *reader) state() string {
	rd.mu.Lock()
	defer rd.mu.Unlock()
	if rd.err != nil {
		return rd.err.Error()
	}
	return fmt.Sprintf("still reading, %d messages so far", len(rd.seqs))
}

func (rd *reader) count() int {
	rd.mu.Lock()
	defer rd.mu.Unlock()
	return len(rd.seqs)
}

// checkPrefix fails unless the reader got broadcasts 0 to n-1 exactly.
func (rd *reader) checkPrefix(t *testing.T, what string, n int) {
	t.Helper()
	rd.mu.Lock()
	defer rd.mu.Unlock()
	require.Len(t, rd.seqs, n, what)
	for i, s := range rd.seqs {
		require.Equal(t, i, s, "%s: broadcast %d", what, i)
	}
}

// TestHubRemoveDuringBroadcast: while broadcasts stream to 100 clients,
// 20 ask to leave (Remove) and 20 close their connections (they leave the
// hub by themselves); once they are out, more broadcasts follow. Those that
// stay get all of them in order; those that left got an unbroken prefix.
func TestHubRemoveDuringBroadcast(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		r := newRoom()
		_, addr := serveGroup(t, c, r, nil)
		const stay, leave, quit, n = 60, 20, 20, 1000
		readers := make([]*reader, stay+leave+quit)
		for i := range readers {
			readers[i] = startReader(dialRaw(t, addr))
		}
		testenv.Eventually(t, 30*time.Second, "every client in the hub", func() bool { return r.hub.Len() == len(readers) })

		sent := make(chan error, 1)
		go func() { sent <- broadcastAll(r.hub, 0, n/2) }()
		for _, rd := range readers[stay : stay+leave] {
			_, err := rd.rc.Write(frame(finText, []byte("leave"), true))
			require.NoError(t, err)
		}
		for _, rd := range readers[stay+leave:] {
			require.NoError(t, rd.rc.Close())
		}
		require.NoError(t, <-sent)
		testenv.Eventually(t, 30*time.Second, "leavers out of the hub", func() bool { return r.hub.Len() == stay })
		require.NoError(t, broadcastAll(r.hub, n/2, n))
		require.Zero(t, r.hub.Stats().Dropped)

		for i, rd := range readers[:stay] {
			testenv.Eventually(t, 60*time.Second, "every broadcast read", func() bool { return rd.count() == n })
			rd.checkPrefix(t, fmt.Sprintf("client %d", i), n)
		}
		for i, rd := range readers[stay : stay+leave] {
			testenv.Eventually(t, 30*time.Second, "the leave answered", func() bool {
				rd.mu.Lock()
				defer rd.mu.Unlock()
				return rd.left
			})
			got := rd.count()
			require.LessOrEqual(t, got, n/2)
			rd.checkPrefix(t, fmt.Sprintf("leaver %d", i), got)
		}
		for _, rd := range readers {
			rd.rc.Close()
			<-rd.done
		}
	})
}

// TestHubSlowConsumer: 20 clients read while one does not, under each
// policy, with a 64 KiB high watermark, small socket buffers and a 1 s
// slow-consumer timeout; a goroutine broadcasts with BroadcastContext,
// which waits while the silent client holds the hub, in rounds until the
// silent client's policy has acted and a few more. The readers get every
// broadcast in order either way. CloseSlow drops the silent one (1008)
// once its timeout has passed. PauseReading keeps it, holding at most the
// high watermark and what was queued when it passed it: it misses
// broadcasts (Dropped counts them) until it reads again, then gets the
// next ones. The combos run in parallel: each waits out the timeout.
func TestHubSlowConsumer(t *testing.T) {
	const high, size = 64 << 10, 4 << 10
	wm := engine.WithBufferLimits(engine.BufferLimits{LowWatermark: 16 << 10, HighWatermark: high})
	buf := engine.WithSocketOptions(engine.SocketOptions{SendBuffer: 16 << 10, RecvBuffer: 16 << 10})
	payload := func(i int) []byte {
		return append(fmt.Appendf(nil, "%06d:", i), bytes.Repeat([]byte{'s'}, size)...)
	}
	for name, policy := range map[string]websocket.SlowConsumer{"PauseReading": websocket.PauseReading, "CloseSlow": websocket.CloseSlow} {
		t.Run(name, func(t *testing.T) {
			testenv.ForEachParallel(t, func(t *testing.T, c testenv.Combo) {
				r := newRoom()
				r.hub.SlowTimeout = time.Second
				_, addr := serveGroup(t, c, r, []websocket.Option{websocket.WithSlowConsumer(policy)}, wm, buf)
				slow := dialRaw(t, addr)
				require.NoError(t, slow.Conn.(*net.TCPConn).SetReadBuffer(4<<10))
				_, err := slow.Write(frame(finText, []byte("mark"), true))
				require.NoError(t, err)
				var sc *websocket.Conn
				select {
				case sc = <-r.marked:
				case <-time.After(30 * time.Second):
					t.Fatal("the slow client's mark did not arrive")
				}
				readers := make([]*reader, 20)
				for i := range readers {
					readers[i] = startReader(dialRaw(t, addr))
				}
				testenv.Eventually(t, 30*time.Second, "every client in the hub", func() bool { return r.hub.Len() == len(readers)+1 })

				// Rounds of 16 KiB, each read by every reader before the
				// next; the silent client passes its watermark after a few
				// and holds the producer until its timeout passes and its
				// policy acts (Slow). The rounds go on for a few more.
				const per, after, maxRounds = 4, 8, 1000
				maxHeld, rounds, slowAt := 0, 0, -1
				for ; slowAt < 0 || rounds < slowAt+after; rounds++ {
					if rounds == maxRounds {
						t.Fatalf("the silent client's policy has not acted in %d rounds: %+v", maxRounds, r.hub.Stats())
					}
					round := rounds
					for i := round * per; i < (round+1)*per; i++ {
						ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
						require.NoError(t, r.hub.BroadcastContext(ctx, websocket.Binary, payload(i)))
						cancel()
					}
					for i, rd := range readers {
						want := (round + 1) * per
						if !testenv.Until(60*time.Second, func() bool { return rd.count() == want }) {
							t.Fatalf("round %d: reader %d of %d has not read %d messages in 60 s: %s", round, i, len(readers), want, rd.state())
						}
					}
					if policy == websocket.PauseReading {
						held, err := engine.Submit(sc.Conn().Loop(), func() (int, error) { return sc.Conn().Buffered(), nil }).Await(t.Context())
						require.NoError(t, err)
						maxHeld = max(maxHeld, held)
					}
					if slowAt < 0 && r.hub.Stats().Slow > 0 {
						slowAt = round + 1
					}
				}
				t.Logf("%d rounds, the policy acted after %d", rounds, slowAt)
				for i, rd := range readers {
					rd.checkPrefix(t, fmt.Sprintf("reader %d", i), rounds*per)
				}
				st := r.hub.Stats()
				require.EqualValues(t, 1, st.Slow, "%+v", st)

				if policy == websocket.CloseSlow {
					cl := <-r.closes
					require.Equal(t, websocket.ClosePolicyViolation, cl.code, "%v", cl)
					require.ErrorIs(t, cl.err, websocket.ErrSlowConsumer)
					require.Equal(t, len(readers), r.hub.Len())
					require.Zero(t, r.hub.Stats().Dropped)
					return
				}
				// What was queued when it passed its watermark: one
				// round at most (the producer waits for the readers).
				require.LessOrEqual(t, maxHeld, high+per*(size+32), "held for the slow client")
				require.Positive(t, maxHeld)
				require.Positive(t, r.hub.Stats().Dropped)
				require.Equal(t, len(readers)+1, r.hub.Len())

				// The slow client reads: it got an increasing run, then
				// once its output drains it gets the next broadcast.
				got := make(chan int, rounds*per+1)
				go func() {
					defer close(got)
					for {
						f, err := slow.read()
						if err != nil {
							return
						}
						got <- seqOf(f.payload)
					}
				}()
				testenv.Eventually(t, 60*time.Second, "the slow client's output drained", sc.Writable)
				require.NoError(t, r.hub.Broadcast(websocket.Binary, payload(rounds*per)))
				last, n := -1, 0
				for s := range got {
					require.Greater(t, s, last)
					last = s
					n++
					if s == rounds*per {
						break
					}
				}
				require.Equal(t, rounds*per, last)
				require.Less(t, n, rounds*per+1, "the slow client missed none")
				slow.Close()
			})
		})
	}
}

// TestHubBacklogAndShutdown: while both loops are busy, broadcasts from a
// goroutine queue up to the hub's backlog (here 64) and the next is refused
// with ErrHubBacklog (an tasks.ErrRejected); BroadcastContext waits
// instead, returning its context's error if it ends first, or queuing the
// message once the loops drain. Every client then gets every queued
// broadcast in order. After the group shuts down the members have left and
// a broadcast returns engine.ErrShutdown.
func TestHubBacklogAndShutdown(t *testing.T) {
	const backlog = 64
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		r := newRoom()
		r.hub.BacklogMessages, r.hub.BacklogBytes = backlog, 1<<20
		g, addr := serveGroup(t, c, r, nil)
		rcs := []*rawConn{dialRaw(t, addr), dialRaw(t, addr), dialRaw(t, addr)}
		testenv.Eventually(t, 30*time.Second, "every client in the hub", func() bool { return r.hub.Len() == len(rcs) })

		hold := make(chan struct{})
		var busy sync.WaitGroup
		for _, l := range g.Loops() {
			busy.Add(1)
			require.NoError(t, l.Execute(tasks.Func(func() { busy.Done(); <-hold })))
		}
		busy.Wait()
		for i := range backlog {
			require.NoError(t, r.hub.Broadcast(websocket.Binary, smallPayload(i)), "broadcast %d", i)
		}
		err := r.hub.Broadcast(websocket.Binary, []byte("one too many"))
		require.ErrorIs(t, err, websocket.ErrHubBacklog)
		require.ErrorIs(t, err, tasks.ErrRejected)
		ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
		err = r.hub.BroadcastContext(ctx, websocket.Binary, []byte("gave up"))
		cancel()
		require.ErrorIs(t, err, websocket.ErrHubBacklog)
		require.ErrorIs(t, err, context.DeadlineExceeded)
		st := r.hub.Stats()
		require.Equal(t, 2, st.FullLoops, "%+v", st)
		require.EqualValues(t, 2, st.Refused, "%+v", st)

		waited := make(chan error, 1)
		go func() { waited <- r.hub.BroadcastContext(t.Context(), websocket.Binary, smallPayload(backlog)) }()
		close(hold)
		require.NoError(t, <-waited)
		for k, rc := range rcs {
			for i := range backlog + 1 {
				f, err := rc.read()
				require.NoError(t, err, "client %d, message %d", k, i)
				require.Equal(t, string(smallPayload(i)), string(f.payload), "client %d, message %d", k, i)
			}
		}
		require.Zero(t, r.hub.Stats().Dropped)

		require.NoError(t, g.Close())
		require.Zero(t, r.hub.Len())
		require.ErrorIs(t, r.hub.Broadcast(websocket.Text, []byte("late")), engine.ErrShutdown)
	})
}

// TestHubZero: a zero Hub, and one with limits, broadcast to no members
// without error, and count nothing.
func TestHubZero(t *testing.T) {
	var zero websocket.Hub
	require.NoError(t, zero.Broadcast(websocket.Text, []byte("no members")))
	require.NoError(t, zero.BroadcastContext(t.Context(), websocket.Binary, []byte("no members")))
	require.Equal(t, websocket.HubStats{}, zero.Stats())
	h := &websocket.Hub{BacklogMessages: 1, BacklogBytes: 1, SlowTimeout: time.Millisecond}
	require.NoError(t, h.Broadcast(websocket.Text, []byte("no members")))
	require.Zero(t, h.Len())
}

// TestHubThousandConnections: 1000 raw clients in a hub over two loops add
// no goroutine per connection, and every one gets a broadcast. It runs at
// full size under -short too, in make test-kernels' VMs (about 3 s a combo
// on 5.10 there): at that size, on 5.10, it found idle connections holding
// every receive buffer (internal/uring's package doc).
func TestHubThousandConnections(t *testing.T) {
	const conns = 1000
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		r := newRoom()
		_, addr := serveGroup(t, c, r, nil)
		first := dialRaw(t, addr) // let the server's lazily started parts start
		testenv.Eventually(t, 30*time.Second, "the first client in the hub", func() bool { return r.hub.Len() == 1 })
		before := runtime.NumGoroutine()
		rcs := make([]*rawConn, conns-1)
		for i := range rcs {
			rcs[i] = dialRaw(t, addr)
		}
		rcs = append(rcs, first)
		testenv.Eventually(t, 60*time.Second, "every client in the hub", func() bool { return r.hub.Len() == len(rcs) })
		require.LessOrEqual(t, runtime.NumGoroutine()-before, 5, "goroutines grew with %d connections", conns)
		msg := bytes.Repeat([]byte("x"), 128)
		require.NoError(t, r.hub.Broadcast(websocket.Binary, msg))
		for k, rc := range rcs {
			f, err := rc.read()
			require.NoError(t, err, "client %d", k)
			require.Equal(t, msg, f.payload)
		}
		for _, rc := range rcs {
			rc.Close()
		}
		testenv.Eventually(t, 60*time.Second, "every client gone", func() bool { return r.hub.Len() == 0 })
	})
}

// BenchmarkHubBroadcast: 128-byte broadcasts to 200 clients on two loops,
// the broadcaster waiting for the readers every 64 messages (so none falls
// behind enough to miss any: dropped/op says); allocs/op is per broadcast,
// whatever the number of members (the clients read into a fixed buffer and
// allocate nothing).
func BenchmarkHubBroadcast(b *testing.B) {
	g, err := loopgroup.New(loopgroup.WithLoops(2))
	if err != nil {
		b.Fatal(err)
	}
	defer g.Close()
	r := newRoom()
	s, err := httpserver.NewFast(httpserver.HandlerFunc(func(w *httpserver.Response, req *httpserver.Request) {
		_ = websocket.UpgradeFast(w, req, r)
	}))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	a, err := s.Listen(g, "tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	const clients = 200
	var got atomic.Int64
	var wg sync.WaitGroup
	for range clients {
		rc := dialRaw(b, a.String())
		_ = rc.SetDeadline(time.Now().Add(10 * time.Minute))
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, 32<<10)
			for {
				n, err := rc.r.Read(buf)
				got.Add(int64(n))
				if err != nil {
					return
				}
			}
		}()
		defer rc.Close()
	}
	for r.hub.Len() < clients {
		runtime.Gosched()
	}
	msg := make([]byte, 128)
	frameLen := int64(2 + len(msg))
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		if i%64 == 0 { // let the readers catch up: 64 frames stay far under the high watermark
			for got.Load() < (int64(i)*clients-int64(r.hub.Stats().Dropped))*frameLen {
				runtime.Gosched()
			}
		}
		for {
			err := r.hub.Broadcast(websocket.Binary, msg)
			if err == nil {
				break
			}
			if !errors.Is(err, websocket.ErrHubBacklog) {
				b.Fatal(err)
			}
			runtime.Gosched()
		}
	}
	// PauseReading members that fell behind miss broadcasts: Dropped.
	deadline := time.Now().Add(5 * time.Minute)
	for got.Load() < (int64(b.N)*clients-int64(r.hub.Stats().Dropped))*frameLen {
		if time.Now().After(deadline) {
			b.Fatalf("%d bytes delivered of %d", got.Load(), int64(b.N)*clients*frameLen)
		}
		runtime.Gosched()
	}
	b.StopTimer()
	delivered := float64(int64(b.N)*clients - int64(r.hub.Stats().Dropped))
	b.ReportMetric(delivered/b.Elapsed().Seconds(), "deliveries/s")
	b.ReportMetric(float64(r.hub.Stats().Dropped)/float64(b.N), "dropped/op")
}
