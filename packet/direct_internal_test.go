package packet

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/internal/testenv"
)

// directModes runs fn for each combo and send path: recvmmsg and sendmmsg
// on readiness, the ring's receive with sendmmsg, and the ring's SENDMSG
// chains; direct counts the direct sends the kernel took, refused those it
// did not (the loop queued them).
func directModes(t *testing.T, fn func(t *testing.T, l *engine.Loop, direct, refused *atomic.Int64)) {
	var direct, refused atomic.Int64
	directObserved = func(e unix.Errno) {
		if e == 0 {
			direct.Add(1)
		} else {
			refused.Add(1)
		}
	}
	defer func() { directObserved = nil }()
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		for _, m := range []struct {
			name       string
			ring, send bool
		}{{"mmsg", false, false}, {"ring", true, false}, {"ringsend", true, true}} {
			t.Run(m.name, func(t *testing.T) {
				testenv.CheckLeaks(t)
				oldRing, oldSend := packetRing, packetRingSend
				packetRing, packetRingSend = m.ring, m.send
				defer func() { packetRing, packetRingSend = oldRing, oldSend }()
				direct.Store(0)
				refused.Store(0)
				fn(t, testenv.NewLoop(t, c), &direct, &refused)
			})
		}
	})
}

type directHandler struct {
	got    atomic.Int64
	closed chan error
}

func (h *directHandler) OnPacket(*Conn, []byte, netip.AddrPort) { h.got.Add(1) }
func (h *directHandler) OnPacketError(*Conn, error)             {}
func (h *directHandler) OnPacketClose(_ *Conn, err error)       { h.closed <- err }

// directReady reports whether a write off the loop would now send
// directly.
func directReady(pc *Conn) bool {
	pc.async.Mu.Lock()
	defer pc.async.Mu.Unlock()
	return pc.direct.Load() && pc.async.Err == nil && len(pc.async.Buf) == 0
}

// directPayload is datagram i's bytes: its index, then bytes derived
// from it.
func directPayload(b []byte, i int) []byte {
	binary.BigEndian.PutUint32(b, uint32(i))
	for k := 4; k < len(b); k++ {
		b[k] = byte(i*7 + k)
	}
	return b
}

// TestPacketDirectOrderUnixgram: one goroutine's datagrams arrive in the
// order written, byte for byte, across the change from direct sends to
// the queue and back: first sent directly, then (the receiver not reading,
// its queue full: EAGAIN) queued up to the write limit, then, the receiver
// reading again, queued and sent by the loop as room comes, and once the
// loop has sent them all, directly again.
func TestPacketDirectOrderUnixgram(t *testing.T) {
	directModes(t, func(t *testing.T, l *engine.Loop, direct, refused *atomic.Int64) {
		path := fmt.Sprintf("@ringloop-direct-%d-%d", os.Getpid(), rand.Int64())
		rx, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: path, Net: "unixgram"})
		require.NoError(t, err)
		defer rx.Close()
		h := &directHandler{closed: make(chan error, 1)}
		pc, err := Dial(l, "unixgram", path, h, &Options{AsyncWriteLimit: 32 << 10})
		require.NoError(t, err)
		defer func() { pc.Close(); <-h.closed }()

		msg := make([]byte, 300)
		// The first write off the loop is queued: direct sends are
		// allowed once the loop has sent it.
		require.NoError(t, pc.WriteTo(directPayload(msg, 0), netip.AddrPort{}))
		written := 1
		require.True(t, testenv.Until(10*time.Second, func() bool { return directReady(pc) }))
		for { // the receiver does not read: the kernel's queue fills, then the socket's
			err := pc.WriteTo(directPayload(msg, written), netip.AddrPort{})
			if errors.Is(err, engine.ErrWriteBufferFull) {
				break
			}
			require.NoError(t, err)
			written++
		}
		require.Positive(t, direct.Load(), "sent directly before the receiver's queue filled")
		require.Positive(t, refused.Load(), "the full queue made direct sends fall back")
		firstDirect := direct.Load()

		const total = 2000
		var received atomic.Int64
		readErr := make(chan error, 1)
		go func() {
			buf := make([]byte, 512)
			want := make([]byte, len(msg))
			for i := range total {
				_ = rx.SetReadDeadline(time.Now().Add(30 * time.Second))
				n, err := rx.Read(buf)
				if err != nil {
					readErr <- err
					return
				}
				if string(buf[:n]) != string(directPayload(want, i)) {
					readErr <- fmt.Errorf("datagram %d: got %d bytes, index %d", i, n, binary.BigEndian.Uint32(buf))
					return
				}
				received.Add(1)
			}
			readErr <- nil
		}()
		for written < total-20 { // queued behind the loop's, as room comes
			err := pc.WriteTo(directPayload(msg, written), netip.AddrPort{})
			if errors.Is(err, engine.ErrWriteBufferFull) {
				select {
				case err := <-readErr:
					t.Fatalf("the receiver stopped at %d of %d written: %v", received.Load(), written, err)
				default:
				}
				time.Sleep(100 * time.Microsecond) // a retry: room comes as the receiver reads
				continue
			}
			require.NoError(t, err)
			written++
		}
		require.True(t, testenv.Until(30*time.Second, func() bool { return received.Load() == int64(written) }),
			"received %d of %d", received.Load(), written)
		for written < total { // the loop sent all it held: direct again
			require.True(t, testenv.Until(10*time.Second, func() bool {
				return directReady(pc) && received.Load() == int64(written) // the receiver's queue has room
			}))
			before := direct.Load()
			require.NoError(t, pc.WriteTo(directPayload(msg, written), netip.AddrPort{}))
			require.Equal(t, before+1, direct.Load(), "datagram %d sent directly", written)
			written++
		}
		require.NoError(t, <-readErr)
		require.Greater(t, direct.Load(), firstDirect)
	})
}

// TestPacketDirectCloseRaceUDP: writers racing Close from other
// goroutines (most of their sends direct) each see their datagrams
// accepted until an error wrapping net.ErrClosed, and every datagram a
// write accepted is sent, in its writer's order, or counted dropped by the
// close; run with -race, no direct send touches the socket's state
// unguarded.
func TestPacketDirectCloseRaceUDP(t *testing.T) {
	directModes(t, func(t *testing.T, l *engine.Loop, direct, _ *atomic.Int64) {
		rx, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
		require.NoError(t, err)
		defer rx.Close()
		_ = rx.SetReadBuffer(4 << 20)
		to := rx.LocalAddr().(*net.UDPAddr).AddrPort()
		h := &directHandler{closed: make(chan error, 1)}
		before := l.Metrics()
		pc, err := Listen(l, "udp4", "127.0.0.1:0", h, nil)
		require.NoError(t, err)
		// The first write off the loop is queued (one byte: the reader
		// below skips it); direct sends are allowed once it is sent.
		require.NoError(t, pc.WriteTo([]byte{0}, to))
		require.True(t, testenv.Until(10*time.Second, func() bool { return directReady(pc) }))
		before.PacketsSent++
		got := make(chan [2]int, 4096)
		stop := make(chan struct{})
		readDone := make(chan struct{})
		go func() {
			defer close(readDone)
			buf := make([]byte, 64)
			for {
				_ = rx.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
				n, err := rx.Read(buf)
				if err != nil {
					select {
					case <-stop:
						return
					default:
						continue
					}
				}
				if n == 32 {
					got <- [2]int{int(buf[0]), int(binary.BigEndian.Uint32(buf[1:]))}
				}
			}
		}()
		defer func() { close(stop); <-readDone }()

		const writers, each = 4, 300
		var (
			accepted [writers]atomic.Int64
			all      atomic.Int64
			wg       sync.WaitGroup
			werrs    = make(chan error, writers)
		)
		for w := range writers {
			wg.Go(func() {
				msg := make([]byte, 32)
				msg[0] = byte(w)
				for i := 0; i < each; {
					binary.BigEndian.PutUint32(msg[1:], uint32(i))
					err := pc.WriteTo(msg, to)
					switch {
					case err == nil:
						i++
						accepted[w].Add(1)
						all.Add(1)
					case errors.Is(err, engine.ErrWriteBufferFull):
						time.Sleep(50 * time.Microsecond) // a retry
					case errors.Is(err, net.ErrClosed):
						return
					default:
						werrs <- err
						return
					}
				}
			})
		}
		require.True(t, testenv.Until(10*time.Second, func() bool { return all.Load() >= writers*each/3 }))
		require.NoError(t, pc.Close())
		wg.Wait()
		close(werrs)
		for err := range werrs {
			require.NoError(t, err)
		}
		require.NoError(t, <-h.closed)
		total := all.Load()
		var m engine.Metrics
		require.True(t, testenv.Until(10*time.Second, func() bool {
			m = l.Metrics()
			return int64(m.PacketsSent-before.PacketsSent+m.PacketsDropped-before.PacketsDropped) == total
		}), "sent %d + dropped %d of %d accepted", m.PacketsSent-before.PacketsSent, m.PacketsDropped-before.PacketsDropped, total)
		require.Positive(t, direct.Load())

		// Every datagram sent arrives, or the receiving socket's queue
		// overflowed (a reader slower than the senders: the kernel counts
		// it in /proc/net/udp's drops), and those that arrive are in each
		// writer's order.
		sent := int(m.PacketsSent - before.PacketsSent)
		port := rx.LocalAddr().(*net.UDPAddr).Port
		var next [writers]int
		deadline := time.Now().Add(30 * time.Second)
		for k := 0; k+udpDrops(t, port) < sent; k++ {
			var d [2]int
		wait:
			for {
				select {
				case d = <-got:
					break wait
				case <-time.After(100 * time.Millisecond):
					if k+udpDrops(t, port) >= sent {
						return
					}
					if time.Now().After(deadline) {
						t.Fatalf("received %d of %d sent (%d dropped by the receiver's kernel)", k, sent, udpDrops(t, port))
					}
				}
			}
			w, i := d[0], d[1]
			require.Less(t, w, writers)
			require.GreaterOrEqual(t, i, next[w], "writer %d's datagrams in order", w)
			require.Less(t, int64(i), accepted[w].Load(), "writer %d: only accepted datagrams", w)
			next[w] = i + 1
		}
	})
}

// TestPacketDirectCountsUDP: direct sends allocate nothing and count in
// the loop's PacketsSent once the loop next serves the socket (here: a
// datagram it receives).
func TestPacketDirectCountsUDP(t *testing.T) {
	directModes(t, func(t *testing.T, l *engine.Loop, direct, _ *atomic.Int64) {
		rx, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
		require.NoError(t, err)
		defer rx.Close()
		to := rx.LocalAddr().(*net.UDPAddr).AddrPort()
		h := &directHandler{closed: make(chan error, 1)}
		before := l.Metrics()
		pc, err := Listen(l, "udp4", "127.0.0.1:0", h, nil)
		require.NoError(t, err)
		defer func() { pc.Close(); <-h.closed }()

		msg := make([]byte, 100)
		require.False(t, directReady(pc), "direct sends before any write off the loop")
		// The first write off the loop is queued: direct sends are
		// allowed once the loop has sent it.
		require.NoError(t, pc.WriteTo(msg, to))
		require.True(t, testenv.Until(10*time.Second, func() bool { return directReady(pc) }))
		const runs = 50
		allocs := testing.AllocsPerRun(runs, func() {
			if err := pc.WriteTo(msg, to); err != nil {
				panic(err)
			}
		})
		require.Zero(t, allocs)
		const sends = runs + 1 // AllocsPerRun's warm-up
		require.EqualValues(t, sends, direct.Load(), "all sent directly")
		buf := make([]byte, 200)
		for range 1 + sends {
			require.NoError(t, rx.SetReadDeadline(time.Now().Add(10*time.Second)))
			_, err := rx.Read(buf)
			require.NoError(t, err)
		}

		peer, err := net.DialUDP("udp4", nil, pc.LocalAddr().(*net.UDPAddr))
		require.NoError(t, err)
		defer peer.Close()
		_, err = peer.Write([]byte("x"))
		require.NoError(t, err)
		var m engine.Metrics
		require.True(t, testenv.Until(10*time.Second, func() bool {
			m = l.Metrics()
			return m.PacketsReceived-before.PacketsReceived == 1 && m.PacketsSent-before.PacketsSent == 1+sends
		}), "received %d, sent %d (want 1, %d)", m.PacketsReceived-before.PacketsReceived, m.PacketsSent-before.PacketsSent, 1+sends)
	})
}

// udpDrops is what the kernel dropped for the IPv4 UDP socket bound to
// 127.0.0.1:port (its receive queue full): /proc/net/udp's drops column.
func udpDrops(t *testing.T, port int) int {
	t.Helper()
	b, err := os.ReadFile("/proc/net/udp")
	require.NoError(t, err)
	local := fmt.Sprintf("0100007F:%04X", port)
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) > 12 && f[1] == local {
			n, err := strconv.Atoi(f[len(f)-1])
			require.NoError(t, err)
			return n
		}
	}
	t.Fatalf("no UDP socket %s in /proc/net/udp", local)
	return 0
}
