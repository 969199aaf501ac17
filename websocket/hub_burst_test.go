package websocket_test

import (
	"bufio"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/internal/testenv"
	"github.com/ringloop/ringloop/websocket"
)

// chat relays every message a member sends to the whole hub from its
// OnMessage, as a chat room does, counting the broadcasts that failed.
type chat struct {
	hub    *websocket.Hub
	closes chan closed
	opens  chan *websocket.Conn

	failed atomic.Int64
	mu     sync.Mutex
	first  error // the first failure
}

// newChat returns a chat room whose hub has the default limits; a test
// sets others on ch.hub before the first member joins.
func newChat() *chat {
	return &chat{hub: new(websocket.Hub), closes: make(chan closed, 256), opens: make(chan *websocket.Conn, 256)}
}

func (ch *chat) OnOpen(c *websocket.Conn) {
	ch.hub.Add(c)
	ch.opens <- c
}
func (ch *chat) OnMessage(c *websocket.Conn, kind websocket.MessageKind, p []byte) {
	if err := ch.hub.Broadcast(kind, p); err != nil {
		if ch.failed.Add(1) == 1 {
			ch.mu.Lock()
			ch.first = err
			ch.mu.Unlock()
		}
	}
}
func (ch *chat) OnClose(c *websocket.Conn, code int, reason string, err error) {
	ch.closes <- closed{code, reason, err}
}

func (ch *chat) failures() string {
	ch.mu.Lock()
	defer ch.mu.Unlock()
	return fmt.Sprintf("%d broadcasts failed, the first: %v", ch.failed.Load(), ch.first)
}

// burstSize is each burst message's payload: "SSSS:NNNNNN:" (sender,
// number) and a filler.
const burstSize = 100

// burstFrames is sender s's whole burst of n messages, as masked client
// frames, for one Write: as fast as a client can send.
func burstFrames(s, n int) []byte {
	var out []byte
	p := make([]byte, burstSize)
	for i := range n {
		copy(p, fmt.Sprintf("%04d:%06d:", s, i))
		for j := 12; j < burstSize; j++ {
			p[j] = 'a' + byte((s+i+j)%26)
		}
		out = append(out, frame(finText, p, true)...)
	}
	return out
}

// burstReader reads a member's broadcasts, recording each as
// sender<<20|number, until it has want of them or its connection fails. It
// parses what each read returned in place, as a fast client does (and so
// that the race detector's cost stays with the server).
type burstReader struct {
	n    atomic.Int64 // messages read
	got  []uint32     // read once done is closed
	err  error        // likewise
	done chan struct{}
}

func readBurst(r *bufio.Reader, want int) *burstReader {
	br := &burstReader{got: make([]uint32, 0, want), done: make(chan struct{})}
	go func() {
		defer close(br.done)
		buf := make([]byte, 64<<10)
		have := 0
		for len(br.got) < want {
			k, err := r.Read(buf[have:])
			have += k
			if err != nil {
				br.err = fmt.Errorf("after %d messages: %w", len(br.got), err)
				return
			}
			p := buf[:have]
			for len(p) >= 2 && len(br.got) < want {
				if p[0] != finText || p[1] != burstSize {
					br.err = fmt.Errorf("after %d messages: frame %#x %#x, want a %d-byte text message", len(br.got), p[0], p[1], burstSize)
					return
				}
				if len(p) < 2+burstSize {
					break
				}
				s, i := digits(p[2:6]), digits(p[7:13])
				if s < 0 || i < 0 {
					br.err = fmt.Errorf("after %d messages: payload %q", len(br.got), p[2:2+burstSize])
					return
				}
				br.got = append(br.got, uint32(s)<<20|uint32(i))
				p = p[2+burstSize:]
			}
			have = copy(buf, p)
			br.n.Store(int64(len(br.got)))
		}
	}()
	return br
}

// digits parses decimal digits, -1 if one is not.
func digits(p []byte) int {
	n := 0
	for _, d := range p {
		if d < '0' || d > '9' {
			return -1
		}
		n = n*10 + int(d-'0')
	}
	return n
}

func (br *burstReader) state() string {
	select {
	case <-br.done:
		if br.err != nil {
			return br.err.Error()
		}
	default:
	}
	return fmt.Sprintf("still reading, %d messages so far", br.n.Load())
}

// burst connects members clients to a chat over two loops, has each send
// msgs messages of 100 bytes at once, and checks that every member read
// every message, each sender's in its order, all members in one order.
// extra clients join first and are returned to the caller.
func burst(t *testing.T, c testenv.Combo, ch *chat, opts []websocket.Option, conn []engine.ConnOption, members, msgs int, extra func(addr string)) {
	_, addr := serveGroup(t, c, ch, opts, conn...)
	if extra != nil {
		extra(addr)
	}
	burstOn(t, ch, func() *rawConn { return dialRaw(t, addr) }, members, msgs)
}

// burstOn is burst with members dialled by dial.
func burstOn(t *testing.T, ch *chat, dial func() *rawConn, members, msgs int) {
	n := ch.hub.Len()
	rcs := make([]*rawConn, members)
	for i := range rcs {
		rcs[i] = dial()
		_ = rcs[i].SetDeadline(time.Now().Add(5 * time.Minute))
	}
	testenv.Eventually(t, 60*time.Second, "every member in the hub", func() bool { return ch.hub.Len() == n+members })

	want := members * msgs
	readers := make([]*burstReader, members)
	for i, rc := range rcs {
		readers[i] = readBurst(rc.r, want)
	}
	start := time.Now()
	sent := make(chan error, members)
	for i, rc := range rcs {
		go func() {
			_, err := rc.Write(burstFrames(i, msgs))
			sent <- err
		}()
	}
	for range members {
		require.NoError(t, <-sent)
	}
	for i, br := range readers {
		if !testenv.Until(5*time.Minute, func() bool {
			select {
			case <-br.done:
				return true
			default:
				return false
			}
		}) {
			t.Fatalf("member %d has not read %d messages in 5 min: %s; %s; %+v", i, want, br.state(), ch.failures(), ch.hub.Stats())
		}
		require.NoError(t, br.err, "member %d; %s; %+v", i, ch.failures(), ch.hub.Stats())
	}
	elapsed := time.Since(start)
	order := readers[0].got
	require.Len(t, order, want)
	next := make([]int, members)
	for k, v := range order {
		s, i := int(v>>20), int(v&(1<<20-1))
		require.Less(t, s, members, "message %d", k)
		require.Equal(t, next[s], i, "member 0, message %d: sender %d's messages out of order", k, s)
		next[s]++
	}
	for i, br := range readers[1:] {
		require.True(t, slices.Equal(order, br.got), "member %d read the broadcasts in another order than member 0", i+1)
	}
	require.Zero(t, ch.failed.Load(), ch.failures())
	st := ch.hub.Stats()
	t.Logf("%d members × %d messages: %d deliveries in %v (%.0f/s); %+v", members, msgs, want*members, elapsed,
		float64(want*members)/elapsed.Seconds(), st)
}

// TestHubBurst: a chat whose OnMessage broadcasts, at default settings
// (watermarks, backlog, slow-consumer timeout), over two loops: 20 members
// each sending 500 messages of 100 bytes at once, then 100 members
// sending 200 each. Every member reads every message, in one order, none
// is refused, skipped or dropped: the senders are paused instead. With
// CloseSlow (a fan-out's choice) too: no member that reads is dropped.
func TestHubBurst(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		for _, tc := range []struct {
			name             string
			policy           websocket.SlowConsumer
			members, perEach int
		}{
			{"20x500", websocket.PauseReading, 20, 500},
			{"20x500/CloseSlow", websocket.CloseSlow, 20, 500},
			{"100x200", websocket.PauseReading, 100, 200},
		} {
			t.Run(tc.name, func(t *testing.T) {
				ch := newChat()
				burst(t, c, ch, []websocket.Option{websocket.WithSlowConsumer(tc.policy)}, nil, tc.members, tc.perEach, nil)
				st := ch.hub.Stats()
				require.Zero(t, st.Dropped, "%+v", st)
				require.Zero(t, st.Slow, "%+v", st)
				require.Zero(t, st.Refused, "%+v", st)
			})
		}
	})
}

// TestHubBurstSilentMember: the 20 × 500 burst with a member that never
// reads (small socket buffers, so it passes its high watermark): once it
// has held the senders for the slow-consumer timeout (5 s here: far more
// than a reading member stays over its watermark, even on a loaded
// machine with the other combos' bursts running) its policy acts,
// CloseSlow dropping it, PauseReading skipping it (Dropped counts what it
// missed), and the 20 others still read every message in one order. Per
// backend and threading mode, run in parallel (each waits out the
// timeout): the kernel profiles' paths (pausing and resuming reads) are
// TestHubBurst's.
func TestHubBurstSilentMember(t *testing.T) {
	buf := engine.WithSocketOptions(engine.SocketOptions{SendBuffer: 16 << 10, RecvBuffer: 16 << 10})
	for name, policy := range map[string]websocket.SlowConsumer{"PauseReading": websocket.PauseReading, "CloseSlow": websocket.CloseSlow} {
		t.Run(name, func(t *testing.T) {
			testenv.ForEachBackendParallel(t, func(t *testing.T, c testenv.Combo) {
				ch := newChat()
				ch.hub.SlowTimeout = 5 * time.Second
				burst(t, c, ch, []websocket.Option{websocket.WithSlowConsumer(policy)}, []engine.ConnOption{buf}, 20, 500, func(addr string) {
					silent := dialRaw(t, addr)
					require.NoError(t, silent.Conn.(*net.TCPConn).SetReadBuffer(4<<10))
					testenv.Eventually(t, 30*time.Second, "the silent member in the hub", func() bool { return ch.hub.Len() == 1 })
				})
				st := ch.hub.Stats()
				require.EqualValues(t, 1, st.Slow, "%+v", st)
				require.Positive(t, st.Pauses, "%+v", st)
				if policy == websocket.CloseSlow {
					cl := <-ch.closes
					require.Equal(t, websocket.ClosePolicyViolation, cl.code, "%v", cl)
					require.ErrorIs(t, cl.err, websocket.ErrSlowConsumer)
					require.Zero(t, st.Dropped, "%+v", st)
					testenv.Eventually(t, 30*time.Second, "the silent member out of the hub", func() bool { return ch.hub.Len() == 20 })
					return
				}
				require.Positive(t, st.Dropped, "%+v", st)
				require.Equal(t, 21, ch.hub.Len())
			})
		})
	}
}

// TestHubBurstTLS: the 20 × 500 burst over wss (crypto/tls clients, TLS
// run by the loop): the senders' reads are paused and resumed through the
// TLS connection, and every member reads every message in one order. Per
// backend and threading mode (the kernel profiles' paths are
// TestHubBurst's; TLS under the race detector is slow).
func TestHubBurstTLS(t *testing.T) {
	p := testenv.NewPKI(t)
	testenv.ForEachBackend(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		ch := newChat()
		addr := serveTLS(t, c, p, ch, nil)
		burstOn(t, ch, func() *rawConn { return dialRawTLS(t, p, addr) }, 20, 500)
		st := ch.hub.Stats()
		require.Zero(t, st.Dropped, "%+v", st)
		require.Zero(t, st.Slow, "%+v", st)
	})
}

// dialRawTLS is dialRaw over TLS, trusting p.
func dialRawTLS(t *testing.T, p *testenv.PKI, addr string) *rawConn {
	t.Helper()
	conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 30 * time.Second}, "tcp", addr, &tls.Config{RootCAs: p.Pool})
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close() })
	_ = conn.SetDeadline(time.Now().Add(60 * time.Second))
	_, err = io.WriteString(conn, "GET /ws HTTP/1.1\r\nHost: a\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"+
		"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
	require.NoError(t, err)
	r := newReader(conn)
	resp, err := http.ReadResponse(r, nil)
	require.NoError(t, err)
	require.Equal(t, http.StatusSwitchingProtocols, resp.StatusCode)
	return &rawConn{conn, r}
}
