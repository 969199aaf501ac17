package packet_test

import (
	"context"
	"encoding/binary"
	"net"
	"net/netip"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/internal/testenv"
	"github.com/ringloop/ringloop/packet"
)

// ringExpected reports whether l's datagram sockets should receive by
// multishot RECVMSG, from the line BackendInfo gives the choice.
func ringExpected(t *testing.T, l *engine.Loop) bool {
	t.Helper()
	f := l.Backend().Features
	line := ""
	for _, r := range f.Reasons {
		if strings.HasPrefix(r, "recvmsg: ") {
			line = r
		}
	}
	if f.Backend != "epoll" {
		require.NotEmpty(t, line, "io_uring's Reasons name the datagram receive: %q", f.Reasons)
	}
	return strings.HasPrefix(line, "recvmsg: datagrams by multishot RECVMSG")
}

// TestPacketRingPathUDP: a socket receives by multishot RECVMSG exactly
// where BackendInfo says so (io_uring on 6.0 and its profiles from 6.1),
// with recvmmsg elsewhere, and one whose MaxSize the ring's buffers cannot
// hold whole keeps recvmmsg.
func TestPacketRingPathUDP(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		l := newLoop(t, c)
		want := ringExpected(t, l)
		pc := listenPacket(t, l, "udp4", "127.0.0.1:0", newPktHandler())
		require.Equal(t, want, onLoop(t, l, func() bool { return packet.RingRecv(pc) }))
		echoRounds(t, "udp4", pc.LocalAddr(), 4, 5)
		big := listenPacket(t, l, "unixgram", t.TempDir()+"/big.sock", newPktHandler(),
			&packet.Options{MaxSize: 1 << 20})
		require.False(t, onLoop(t, l, func() bool { return packet.RingRecv(big) }), "MaxSize 1 MiB: recvmmsg")
	})
}

// TestPacketTruncatedUnixgram: datagrams over MaxSize are reported with
// their sizes both when the receive buffer held them (over MaxSize only)
// and when it cut them (MSG_TRUNC); one of exactly MaxSize (64 KiB) comes
// whole, in order with the others.
func TestPacketTruncatedUnixgram(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		l := newLoop(t, c)
		h := newPktHandler()
		got := make(chan int, 4)
		h.onPacket = func(_ *packet.Conn, b []byte, _ netip.AddrPort) { got <- len(b) }
		path := t.TempDir() + "/trunc.sock"
		pc := listenPacket(t, l, "unixgram", path, h, &packet.Options{MaxSize: 64 << 10})
		peer, err := net.DialUnix("unixgram", nil, &net.UnixAddr{Name: path, Net: "unixgram"})
		require.NoError(t, err)
		defer peer.Close()
		require.NoError(t, peer.SetWriteBuffer(1<<20))
		for _, size := range []int{64<<10 + 1, 100000, 64 << 10} {
			_, err := peer.Write(make([]byte, size))
			require.NoError(t, err)
		}
		for _, size := range []string{"65537 bytes", "100000 bytes"} {
			err := h.waitError(t)
			require.ErrorIs(t, err, packet.ErrTruncated)
			require.ErrorContains(t, err, size)
		}
		select {
		case n := <-got:
			require.Equal(t, 64<<10, n)
		case <-time.After(30 * time.Second):
			t.Fatal("the datagram of MaxSize was not delivered")
		}
		require.NoError(t, pc.Close())
		require.NoError(t, h.waitClosed(t))
		require.Empty(t, got)
	})
}

// TestPacketBurstUDP: a burst far larger than the driver's datagram
// buffers (8 of them here; the loop held up meanwhile, so the burst waits
// in the socket) runs the ring dry; the receive waits for the buffers to
// come back and goes on, and every datagram arrives, in order. On the ring
// the driver counts the waits.
func TestPacketBurstUDP(t *testing.T) {
	const burst = 200
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		l := newLoop(t, c, engine.WithDriverConfig(engine.DriverConfig{Profile: string(c.Profile), BufferCount: 8}))
		ring := ringExpected(t, l)
		h := newPktHandler()
		release := make(chan struct{})
		seqs := make(chan uint16, burst+1)
		h.onPacket = func(_ *packet.Conn, b []byte, _ netip.AddrPort) {
			if len(b) == 1 { // the first: hold the loop until the burst is queued
				<-release
				return
			}
			seqs <- binary.BigEndian.Uint16(b)
		}
		pc := listenPacket(t, l, "udp4", "127.0.0.1:0", h, &packet.Options{RecvBuffer: 4 << 20})
		peer, err := net.DialUDP("udp4", nil, pc.LocalAddr().(*net.UDPAddr))
		require.NoError(t, err)
		defer peer.Close()
		_, noBufs, _ := uringStats(t, l)
		_, err = peer.Write([]byte{0})
		require.NoError(t, err)
		msg := make([]byte, 8)
		for i := range burst {
			binary.BigEndian.PutUint16(msg, uint16(i))
			_, err := peer.Write(msg)
			require.NoError(t, err)
		}
		close(release)
		for i := range burst {
			select {
			case s := <-seqs:
				require.EqualValues(t, i, s, "datagrams in order")
			case <-time.After(30 * time.Second):
				t.Fatalf("%d of %d datagrams delivered", i, burst)
			}
		}
		_, after, _ := uringStats(t, l)
		if ring {
			require.Greater(t, after, noBufs, "the burst ran the datagram ring dry")
		}
		require.Empty(t, h.errs)
	})
}

// uringStats reads the io_uring driver's counters on l's loop.
func uringStats(t *testing.T, l *engine.Loop) (live int, noBufs uint64, ok bool) {
	t.Helper()
	type r struct {
		live   int
		noBufs uint64
		ok     bool
	}
	v := onLoop(t, l, func() r { a, b, c := packet.URingStats(l); return r{a, b, c} })
	return v.live, v.noBufs, v.ok
}

// TestPacketCloseArmedUDP: closing sockets whose RECVMSG is armed, with
// datagrams arriving, leaves no op of theirs in the driver, and their
// buffers come back: a new socket on the loop then echoes more datagrams
// than the ring holds.
func TestPacketCloseArmedUDP(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		l := newLoop(t, c)
		live, _, _ := uringStats(t, l)
		for range 3 {
			h := newPktHandler()
			h.onPacket = func(*packet.Conn, []byte, netip.AddrPort) {}
			pc := listenPacket(t, l, "udp4", "127.0.0.1:0", h)
			peer, err := net.DialUDP("udp4", nil, pc.LocalAddr().(*net.UDPAddr))
			require.NoError(t, err)
			for range 64 {
				_, err := peer.Write(make([]byte, 100))
				require.NoError(t, err)
			}
			require.NoError(t, pc.Close())
			require.NoError(t, h.waitClosed(t))
			peer.Close()
		}
		now, _, _ := uringStats(t, l)
		require.Equal(t, live, now, "the driver's live ops after the sockets closed")
		pc := listenPacket(t, l, "udp4", "127.0.0.1:0", newPktHandler())
		echoRounds(t, "udp4", pc.LocalAddr(), 16, scale(20, 10))
	})
}

// TestPacketRingOffUDP: with the ring receive turned off the same driver
// serves datagrams with recvmmsg (the benchmark's comparison).
func TestPacketRingOffUDP(t *testing.T) {
	defer packet.SetRing(false)()
	testenv.ForEachBackend(t, func(t *testing.T, c testenv.Combo) {
		l := newLoop(t, c)
		pc := listenPacket(t, l, "udp4", "127.0.0.1:0", newPktHandler())
		require.False(t, onLoop(t, l, func() bool { return packet.RingRecv(pc) }))
		echoRounds(t, "udp4", pc.LocalAddr(), 4, 5)
	})
}

// TestPacketInfoAllocsUDP: with ReceiveInfo (control messages in each
// receive) an echo answered by Reply allocates nothing in steady state, on
// the ring as on recvmmsg.
func TestPacketInfoAllocsUDP(t *testing.T) {
	echoAllocs(t, func(h *pktHandler) { h.reply = true }, &packet.Options{ReceiveInfo: true})
}

// TestPacketSendRefusedUDP: a datagram the kernel refuses (over UDP's
// 65507 bytes: EMSGSIZE) between two good ones written in one iteration is
// reported to OnPacketError as a "write" error and dropped; the good ones
// are sent, in order (on the ring the refusal stops the SENDMSG chain, and
// the rest goes in the next one).
func TestPacketSendRefusedUDP(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		l := newLoop(t, c)
		rx, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
		require.NoError(t, err)
		defer rx.Close()
		to := rx.LocalAddr().(*net.UDPAddr).AddrPort()
		h := newPktHandler()
		pc := listenPacket(t, l, "udp4", "127.0.0.1:0", h, &packet.Options{AsyncWriteLimit: 1 << 20})
		_, err = engine.Submit(l, func() (struct{}, error) {
			for _, b := range [][]byte{[]byte("first"), make([]byte, 70000), []byte("second")} {
				if err := pc.WriteTo(b, to); err != nil {
					return struct{}{}, err
				}
			}
			return struct{}{}, nil
		}).Await(context.Background())
		require.NoError(t, err)
		buf := make([]byte, 100)
		for _, want := range []string{"first", "second"} {
			_ = rx.SetReadDeadline(time.Now().Add(30 * time.Second))
			k, err := rx.Read(buf)
			require.NoError(t, err)
			require.Equal(t, want, string(buf[:k]))
		}
		err = h.waitError(t)
		require.ErrorIs(t, err, syscall.EMSGSIZE)
		var oe *net.OpError
		require.ErrorAs(t, err, &oe)
		require.Equal(t, "write", oe.Op)
		require.Equal(t, to.String(), oe.Addr.String())
	})
}

// TestPacketRingSendUDP runs the send tests with the ring's SENDMSG
// chains on (where sockets receive by RECVMSG; elsewhere they repeat the
// default): order, refusals, a full queue, a slow receiver's EAGAIN, close
// and shutdown with chains in flight, and no allocation.
func TestPacketRingSendUDP(t *testing.T) {
	defer packet.SetRingSend(true)()
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		l := newLoop(t, c)
		pc := listenPacket(t, l, "udp4", "127.0.0.1:0", newPktHandler())
		require.Equal(t, ringExpected(t, l), onLoop(t, l, func() bool { return packet.RingSend(pc) }))
	})
	t.Run("Echo", TestPacketEchoUDP)
	t.Run("Refused", TestPacketSendRefusedUDP)
	t.Run("WriteFull", TestPacketWriteFullUDP)
	t.Run("AsyncLoad", TestPacketAsyncLoadUnixgram)
	t.Run("CloseArmed", TestPacketCloseArmedUDP)
	t.Run("Shutdown", TestPacketShutdownUDP)
	t.Run("Allocs", TestPacketEchoAllocsUDP)
}
