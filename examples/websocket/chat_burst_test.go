package main

import (
	"bufio"
	"crypto/rand"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ringloop/ringloop/internal/testenv"
)

// TestChatBurst runs the command and, from this process, has every member
// of /chat send its whole burst at once: 20 members × 500 messages of 100
// bytes, then 100 members × 200. Every member reads every message (none is
// lost to the burst), each sender's in its order and all members in one
// order. CHAT_BURST="members×messages,..." (e.g. "20x500,100x200") sets the
// sizes, to measure others.
func TestChatBurst(t *testing.T) {
	sizes := [][2]int{{20, 500}, {100, 200}}
	if env := os.Getenv("CHAT_BURST"); env != "" {
		sizes = nil
		for _, f := range strings.Split(env, ",") {
			var m, n int
			if _, err := fmt.Sscanf(f, "%dx%d", &m, &n); err != nil || m <= 0 || n <= 0 || m > 9999 || n > 999999 {
				t.Fatalf("CHAT_BURST: %q is not members x messages", f)
			}
			sizes = append(sizes, [2]int{m, n})
		}
	}
	testenv.ForEachBackend(t, func(t *testing.T, c testenv.Combo) {
		p := testenv.StartMain(t, c, "-addr", "127.0.0.1:0", "-loops", "2")
		for _, sz := range sizes {
			t.Run(fmt.Sprintf("%dx%d", sz[0], sz[1]), func(t *testing.T) { chatBurst(t, p.Addr, sz[0], sz[1]) })
		}
		p.Interrupt(t)
	})
}

// chatBurst is one burst of members × msgs against the chat at addr.
func chatBurst(t *testing.T, addr string, members, msgs int) {
	conns := make([]*member, members)
	for i := range conns {
		conns[i] = join(t, addr)
	}
	want := members * msgs
	for _, m := range conns {
		m.start(want)
	}
	start := time.Now()
	sent := make(chan error, members)
	for i, m := range conns {
		go func() {
			_, err := m.conn.Write(burstFrames(i, msgs))
			sent <- err
		}()
	}
	for range members {
		if err := <-sent; err != nil {
			t.Fatal(err)
		}
	}
	for i, m := range conns {
		select {
		case <-m.done:
		case <-time.After(5 * time.Minute):
			t.Fatalf("member %d has not read %d messages in 5 min (%d so far)", i, want, m.n.Load())
		}
		if m.err != nil {
			t.Fatalf("member %d: %v", i, m.err)
		}
	}
	elapsed := time.Since(start)
	order := conns[0].got
	next := make([]int, members)
	for k, v := range order {
		s, i := int(v>>20), int(v&(1<<20-1))
		if s >= members || next[s] != i {
			t.Fatalf("member 0, message %d: sender %d's message %d, want its %d", k, s, i, next[s])
		}
		next[s]++
	}
	for i, m := range conns[1:] {
		if !slices.Equal(order, m.got) {
			t.Fatalf("member %d read the messages in another order than member 0", i+1)
		}
	}
	t.Logf("%d members × %d messages of %d bytes: %d of %d deliveries (100%%) in %v, %.0f/s",
		members, msgs, burstSize, want*members, want*members, elapsed.Round(time.Millisecond), float64(want*members)/elapsed.Seconds())
	for _, m := range conns {
		m.conn.Close()
	}
}

// burstSize is each message's payload: "SSSS:NNNNNN:" (sender, number) and
// a filler.
const burstSize = 100

// member is a raw WebSocket client of /chat: it reads in bulk and parses
// in place, so the client is not what limits the burst.
type member struct {
	conn net.Conn
	r    *bufio.Reader
	n    atomic.Int64 // messages read
	got  []uint32     // sender<<20|number, read once done is closed
	err  error        // likewise
	done chan struct{}
}

// join connects to /chat and reads the welcome: the member is in the room.
func join(t *testing.T, addr string) *member {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	_ = conn.SetDeadline(time.Now().Add(10 * time.Minute))
	if _, err := io.WriteString(conn, "GET /chat HTTP/1.1\r\nHost: "+addr+"\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"+
		"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReaderSize(conn, 64<<10)
	resp, err := http.ReadResponse(r, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("upgrade: %s", resp.Status)
	}
	var h [2]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		t.Fatal(err)
	}
	welcome := make([]byte, h[1]&0x7F)
	if _, err := io.ReadFull(r, welcome); err != nil || !strings.HasPrefix(string(welcome), "welcome, loop ") {
		t.Fatalf("welcome: %q %v", welcome, err)
	}
	return &member{conn: conn, r: r, done: make(chan struct{})}
}

// start reads want messages in the background.
func (m *member) start(want int) {
	m.got = make([]uint32, 0, want)
	go func() {
		defer close(m.done)
		buf := make([]byte, 64<<10)
		have := 0
		for len(m.got) < want {
			k, err := m.r.Read(buf[have:])
			have += k
			if err != nil {
				m.err = fmt.Errorf("after %d messages: %w", len(m.got), err)
				return
			}
			p := buf[:have]
			for len(p) >= 2 && len(m.got) < want {
				if p[0] != 0x81 || p[1] != burstSize {
					m.err = fmt.Errorf("after %d messages: frame %#x %#x, want a %d-byte text message", len(m.got), p[0], p[1], burstSize)
					return
				}
				if len(p) < 2+burstSize {
					break
				}
				s, err1 := strconv.Atoi(string(p[2:6]))
				i, err2 := strconv.Atoi(string(p[7:13]))
				if err1 != nil || err2 != nil {
					m.err = fmt.Errorf("after %d messages: payload %q", len(m.got), p[2:2+burstSize])
					return
				}
				m.got = append(m.got, uint32(s)<<20|uint32(i))
				p = p[2+burstSize:]
			}
			have = copy(buf, p)
			m.n.Store(int64(len(m.got)))
		}
	}()
}

// burstFrames is sender s's n messages as masked client frames, for one
// Write: as fast as a client can send.
func burstFrames(s, n int) []byte {
	out := make([]byte, 0, n*(6+burstSize))
	p := make([]byte, burstSize)
	var key [4]byte
	for i := range n {
		copy(p, fmt.Sprintf("%04d:%06d:", s, i))
		for j := 12; j < burstSize; j++ {
			p[j] = 'a' + byte((s+i+j)%26)
		}
		_, _ = rand.Read(key[:])
		out = append(out, 0x81, 0x80|burstSize)
		out = append(out, key[:]...)
		for j, b := range p {
			out = append(out, b^key[j%4])
		}
	}
	return out
}
