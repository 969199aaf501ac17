package packet_test

import (
	"encoding/binary"
	"net"
	"net/netip"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/stretchr/testify/require"

	"github.com/ringloop/ringloop/internal/testenv"
	"github.com/ringloop/ringloop/packet"
)

// TestPacketBurstOnePeerUDP: a burst written to one peer in one callback
// (the run sends coalesce, UDP GSO) reaches it as the datagrams written,
// each whole and in order, the shorter last one too; then a burst to two
// peers in turn, which cannot coalesce, arrives as well.
func TestPacketBurstOnePeerUDP(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		l := newLoop(t, c)
		for _, n := range udpNets() {
			const size, count = 1000, 100 // more than one run of 64
			h := newPktHandler()
			h.onPacket = func(pc *packet.Conn, b []byte, from netip.AddrPort) {
				peers := []netip.AddrPort{from}
				if len(b) == 2*len(from.String()) { // "two": b names a second peer
					peers = append(peers, netip.MustParseAddrPort(string(b[:len(b)/2])))
				}
				msg := make([]byte, size)
				for i := range count {
					binary.BigEndian.PutUint32(msg, uint32(i))
					m := msg
					if i == count-1 {
						m = msg[:300]
					}
					h.check(pc.WriteTo(m, peers[i%len(peers)]))
				}
			}
			pc := listenPacket(t, l, n[0], n[1], h, &packet.Options{SendBuffer: 1 << 20})
			server := pc.LocalAddr().(*net.UDPAddr)
			peer := burstPeer(t, n[0], server)
			before := l.Metrics()
			_, err := peer.Write([]byte("go"))
			require.NoError(t, err)
			readBurst(t, peer, 0, 1, size, count)
			waitPacketCounts(t, l, before, 1, count, 0)

			other := burstPeer(t, n[0], server)
			a := other.LocalAddr().String()
			require.Len(t, a, len(peer.LocalAddr().String()), "two loopback peers' addresses are as long")
			before = l.Metrics()
			_, err = peer.Write([]byte(a + a))
			require.NoError(t, err)
			readBurst(t, peer, 0, 2, size, count)
			readBurst(t, other, 1, 2, size, count)
			// Metrics are published once per loop iteration, after the
			// sends: wait for them, or the next network's "before" may
			// miss this burst.
			waitPacketCounts(t, l, before, 1, count, 0)
			require.Empty(t, h.errs)
		}
	})
}

func burstPeer(t *testing.T, network string, server *net.UDPAddr) *net.UDPConn {
	t.Helper()
	c, err := net.DialUDP(network, nil, server)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	require.NoError(t, c.SetReadBuffer(1<<20))
	return c
}

// readBurst reads the datagrams first, first+step, ... of a burst of count
// from c: each numbered in its first 4 bytes, size long but the last (300).
func readBurst(t *testing.T, c *net.UDPConn, first, step, size, count int) {
	t.Helper()
	buf := make([]byte, 65536)
	require.NoError(t, c.SetReadDeadline(time.Now().Add(30*time.Second)))
	for i := first; i < count; i += step {
		k, err := c.Read(buf)
		require.NoError(t, err, "datagram %d", i)
		want := size
		if i == count-1 {
			want = 300
		}
		require.Equal(t, want, k, "datagram %d's size", i)
		require.EqualValues(t, i, binary.BigEndian.Uint32(buf), "datagram order")
	}
}

// TestPacketCoalescedRunUDP: a peer that sends a run with GSO (one
// sendmsg, UDP_SEGMENT) to an echo server on the loop gets each datagram
// back whole and in order: the loop cuts a run the kernel delivers
// coalesced (UDP_GRO) back into the datagrams sent.
func TestPacketCoalescedRunUDP(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		l := newLoop(t, c)
		for _, n := range udpNets() {
			const size, count = 1200, 21
			pc := listenPacket(t, l, n[0], n[1], newPktHandler())
			peer := burstPeer(t, n[0], pc.LocalAddr().(*net.UDPAddr))
			before := l.Metrics()
			run := make([]byte, 0, size*count)
			for i := range count {
				seg := make([]byte, size)
				if i == count-1 {
					seg = seg[:300]
				}
				binary.BigEndian.PutUint32(seg, uint32(i))
				run = append(run, seg...)
			}
			oob := make([]byte, unix.CmsgSpace(2))
			cm := (*unix.Cmsghdr)(unsafe.Pointer(&oob[0]))
			cm.Level, cm.Type = unix.SOL_UDP, unix.UDP_SEGMENT
			cm.SetLen(unix.CmsgLen(2))
			*(*uint16)(unsafe.Pointer(&oob[unix.CmsgLen(0)])) = size
			_, _, err := peer.WriteMsgUDP(run, oob, nil)
			require.NoError(t, err)
			readBurst(t, peer, 0, 1, size, count)
			waitPacketCounts(t, l, before, count, count, 0)
		}
	})
}
