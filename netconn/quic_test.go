package netconn_test

import (
	"bytes"
	"net"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/require"
	"golang.org/x/net/ipv4"
	"golang.org/x/sys/unix"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/netconn"
)

// quic-go's optional interfaces (sys_conn.go, sys_conn_oob.go), which
// PacketConn offers so that quic-go batches reads and sends GSO runs.
var (
	_ interface {
		net.PacketConn
		SyscallConn() (syscall.RawConn, error)
		SetReadBuffer(int) error
		ReadMsgUDP(b, oob []byte) (n, oobn, flags int, addr *net.UDPAddr, err error)
		WriteMsgUDP(b, oob []byte, addr *net.UDPAddr) (n, oobn int, err error)
	} = (*netconn.PacketConn)(nil)
	_ interface {
		ReadBatch(ms []ipv4.Message, flags int) (int, error)
	} = (*netconn.PacketConn)(nil)
)

// TestPacketReadBatchUDP: datagrams queued from two peers come out of
// ReadBatch several per call, byte for byte, each with its sender.
func TestPacketReadBatchUDP(t *testing.T) {
	forEach(t, func(t *testing.T, loops engine.Loops) {
		for _, n := range udpNets() {
			pc := listenPacket(t, loops, n[0], n[1])
			const each = 6
			var peers [2]*net.UDPConn
			want := map[string][][]byte{}
			for i := range peers {
				c, err := net.DialUDP(n[0], nil, pc.LocalAddr().(*net.UDPAddr))
				require.NoError(t, err)
				defer c.Close()
				peers[i] = c
				for j := range each {
					b := bytes.Repeat([]byte{byte(16*i + j)}, 100+50*j)
					_, err := c.Write(b)
					require.NoError(t, err)
					key := c.LocalAddr().String()
					want[key] = append(want[key], b)
				}
			}
			ms := make([]ipv4.Message, 8)
			for i := range ms {
				ms[i].Buffers = [][]byte{make([]byte, 2048)}
			}
			got := map[string][][]byte{}
			calls, total := 0, 0
			require.NoError(t, pc.SetReadDeadline(time.Now().Add(10*time.Second)))
			for total < 2*each {
				k, err := pc.ReadBatch(ms, 0)
				require.NoError(t, err)
				require.Positive(t, k)
				calls++
				for _, m := range ms[:k] {
					require.Zero(t, m.NN)
					key := m.Addr.String()
					got[key] = append(got[key], bytes.Clone(m.Buffers[0][:m.N]))
				}
				total += k
			}
			require.Equal(t, want, got)
			require.Less(t, calls, 2*each, "no call read more than one queued datagram")
		}
	})
}

// TestPacketWriteMsgUDPSegmentsUDP: one WriteMsgUDP with a UDP_SEGMENT
// control message (and an ECN mark, as quic-go sends) reaches a plain
// net.UDPConn as the separate datagrams, in order, the shorter last too.
func TestPacketWriteMsgUDPSegmentsUDP(t *testing.T) {
	forEach(t, func(t *testing.T, loops engine.Loops) {
		for _, n := range udpNets() {
			pc := listenPacket(t, loops, n[0], n[1])
			peer, err := net.ListenUDP(n[0], nil)
			require.NoError(t, err)
			defer peer.Close()
			const seg = 1000
			payload := make([]byte, 3*seg+400)
			for i := range payload {
				payload[i] = byte(i * 7 / 5)
			}
			oob := segmentOOB(seg)
			if n[0] == "udp4" {
				oob = append(oob, intOOB(unix.IPPROTO_IP, unix.IP_TOS, 2)...) // ECT(0)
			} else {
				oob = append(oob, intOOB(unix.IPPROTO_IPV6, unix.IPV6_TCLASS, 2)...)
			}
			w, wo, err := pc.WriteMsgUDP(payload, oob, peer.LocalAddr().(*net.UDPAddr))
			require.NoError(t, err)
			require.Equal(t, len(payload), w)
			require.Equal(t, len(oob), wo)
			require.NoError(t, peer.SetReadDeadline(time.Now().Add(10*time.Second)))
			buf := make([]byte, 8192)
			for off := 0; off < len(payload); off += seg {
				k, from, err := peer.ReadFromUDP(buf)
				require.NoError(t, err)
				require.Equal(t, pc.LocalAddr().(*net.UDPAddr).Port, from.Port)
				require.Equal(t, payload[off:min(off+seg, len(payload))], buf[:k], "segment at %d", off)
			}
		}
	})
}

// TestPacketSyscallConnUDP: Control runs on the real socket (SO_TYPE,
// and SetReadBuffer's SO_RCVBUF), Read and Write refuse, and Control fails
// once the socket is closed.
func TestPacketSyscallConnUDP(t *testing.T) {
	forEach(t, func(t *testing.T, loops engine.Loops) {
		pc, err := netconn.ListenPacket(loops, "udp4", "127.0.0.1:0")
		require.NoError(t, err)
		rc, err := pc.SyscallConn()
		require.NoError(t, err)
		require.NoError(t, pc.SetReadBuffer(32<<10))
		var typ, rcvbuf int
		var typErr, bufErr error
		require.NoError(t, rc.Control(func(fd uintptr) {
			typ, typErr = unix.GetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_TYPE)
			rcvbuf, bufErr = unix.GetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_RCVBUF)
		}))
		require.NoError(t, typErr)
		require.NoError(t, bufErr)
		require.Equal(t, unix.SOCK_DGRAM, typ)
		require.Equal(t, 64<<10, rcvbuf) // the kernel doubles what was set
		called := false
		require.Error(t, rc.Read(func(uintptr) bool { called = true; return true }))
		require.Error(t, rc.Write(func(uintptr) bool { called = true; return true }))
		require.False(t, called)
		require.NoError(t, pc.Close())
		require.Eventually(t, func() bool { return rc.Control(func(uintptr) { called = true }) != nil },
			10*time.Second, time.Millisecond)
		require.False(t, called, "Control ran after Close")
	})
}

func segmentOOB(size uint16) []byte {
	b := make([]byte, unix.CmsgSpace(2))
	h := (*unix.Cmsghdr)(unsafe.Pointer(&b[0]))
	h.Level, h.Type = unix.IPPROTO_UDP, unix.UDP_SEGMENT
	h.SetLen(unix.CmsgLen(2))
	*(*uint16)(unsafe.Pointer(&b[unix.CmsgLen(0)])) = size
	return b
}

func intOOB(level, typ int32, v int32) []byte {
	b := make([]byte, unix.CmsgSpace(4))
	h := (*unix.Cmsghdr)(unsafe.Pointer(&b[0]))
	h.Level, h.Type = level, typ
	h.SetLen(unix.CmsgLen(4))
	*(*int32)(unsafe.Pointer(&b[unix.CmsgLen(0)])) = v
	return b
}
