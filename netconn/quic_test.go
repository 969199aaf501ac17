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
	"github.com/ringloop/ringloop/packet"
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

// TestPacketReadOOBUDP: once the socket asks through SyscallConn, as
// quic-go does, for the TOS byte and the local address, ReadMsgUDP and
// ReadBatch return each datagram's ECN mark and the address it was sent
// to as control messages; an oob too short for them all holds the whole
// ones that fit, with MSG_CTRUNC. A MaxSize under 65535 leaves UDP_GRO
// off, so the socket receives with no room for control messages until
// Control ran (io_uring: its RECVMSG is armed again, with room).
func TestPacketReadOOBUDP(t *testing.T) {
	forEach(t, func(t *testing.T, loops engine.Loops) {
		for _, c := range []struct {
			n    [2]string
			opts packet.Options
		}{
			{udpNets()[0], packet.Options{}},
			{udpNets()[0], packet.Options{MaxSize: 1500}},
			{udpNets()[len(udpNets())-1], packet.Options{}}, // udp6 where the host has it
		} {
			n := c.n
			pc := listenPacket(t, loops, n[0], n[1], netconn.WithPacketOptions(c.opts))
			rc, err := pc.SyscallConn()
			require.NoError(t, err)
			v4 := n[0] == "udp4"
			var errs [2]error
			require.NoError(t, rc.Control(func(fd uintptr) {
				if v4 {
					errs[0] = unix.SetsockoptInt(int(fd), unix.IPPROTO_IP, unix.IP_RECVTOS, 1)
					errs[1] = unix.SetsockoptInt(int(fd), unix.IPPROTO_IP, unix.IP_PKTINFO, 1)
				} else {
					errs[0] = unix.SetsockoptInt(int(fd), unix.IPPROTO_IPV6, unix.IPV6_RECVTCLASS, 1)
					errs[1] = unix.SetsockoptInt(int(fd), unix.IPPROTO_IPV6, unix.IPV6_RECVPKTINFO, 1)
				}
			}))
			require.NoError(t, errs[0])
			require.NoError(t, errs[1])
			local := pc.LocalAddr().(*net.UDPAddr)
			peer, err := net.DialUDP(n[0], nil, local)
			require.NoError(t, err)
			defer peer.Close()
			send := func(ecn int32) {
				oob := intOOB(unix.IPPROTO_IP, unix.IP_TOS, ecn)
				if !v4 {
					oob = intOOB(unix.IPPROTO_IPV6, unix.IPV6_TCLASS, ecn)
				}
				_, _, err := peer.WriteMsgUDP([]byte{byte(ecn)}, oob, nil)
				require.NoError(t, err)
			}
			// check parses a datagram's control messages: its ECN mark
			// matches its payload, its local address is the socket's.
			check := func(p, oob []byte) {
				t.Helper()
				require.Len(t, p, 1)
				msgs, err := unix.ParseSocketControlMessage(oob)
				require.NoError(t, err)
				var tos, dst bool
				for _, m := range msgs {
					switch h := m.Header; {
					case h.Level == unix.IPPROTO_IP && h.Type == unix.IP_TOS:
						require.Equal(t, p[0], m.Data[0]&3, "ECN")
						tos = true
					case h.Level == unix.IPPROTO_IPV6 && h.Type == unix.IPV6_TCLASS:
						require.Equal(t, p[0], byte(*(*int32)(unsafe.Pointer(&m.Data[0])))&3, "ECN")
						tos = true
					case h.Level == unix.IPPROTO_IP && h.Type == unix.IP_PKTINFO:
						in := (*unix.Inet4Pktinfo)(unsafe.Pointer(&m.Data[0]))
						require.Equal(t, local.IP.To4(), net.IP(in.Addr[:]))
						dst = true
					case h.Level == unix.IPPROTO_IPV6 && h.Type == unix.IPV6_PKTINFO:
						in := (*unix.Inet6Pktinfo)(unsafe.Pointer(&m.Data[0]))
						require.Equal(t, local.IP.To16(), net.IP(in.Addr[:]))
						dst = true
					default:
						t.Fatalf("unexpected control message %d/%d", h.Level, h.Type)
					}
				}
				require.True(t, tos && dst, "TOS %v, local address %v", tos, dst)
			}
			require.NoError(t, pc.SetReadDeadline(time.Now().Add(10*time.Second)))
			buf, oob := make([]byte, 64), make([]byte, 128)
			for ecn := int32(1); ecn <= 3; ecn++ {
				send(ecn)
				k, oobn, flags, from, err := pc.ReadMsgUDP(buf, oob)
				require.NoError(t, err)
				require.Zero(t, flags)
				require.Equal(t, peer.LocalAddr().String(), from.String())
				check(buf[:k], oob[:oobn])
			}
			ms := make([]ipv4.Message, 4)
			for i := range ms {
				ms[i].Buffers = [][]byte{make([]byte, 64)}
				ms[i].OOB = make([]byte, 128)
			}
			for ecn := int32(1); ecn <= 3; ecn++ {
				send(ecn)
			}
			for got := 0; got < 3; {
				k, err := pc.ReadBatch(ms, 0)
				require.NoError(t, err)
				for _, m := range ms[:k] {
					require.Zero(t, m.Flags)
					require.Equal(t, byte(got+1), m.Buffers[0][0], "in order")
					check(m.Buffers[0][:m.N], m.OOB[:m.NN])
					got++
				}
			}
			// Room for the first message and 8 bytes (the second takes 24
			// or more): it alone, whole, and MSG_CTRUNC.
			send(2)
			_, oobn, _, _, err := pc.ReadMsgUDP(buf, oob)
			require.NoError(t, err)
			msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
			require.NoError(t, err)
			require.Len(t, msgs, 2)
			send(2)
			short := make([]byte, unix.CmsgSpace(len(msgs[0].Data))+8)
			k, oobn, flags, _, err := pc.ReadMsgUDP(buf, short)
			require.NoError(t, err)
			require.Equal(t, 1, k)
			require.Equal(t, unix.MSG_CTRUNC, flags)
			msgs, err = unix.ParseSocketControlMessage(short[:oobn])
			require.NoError(t, err)
			require.Len(t, msgs, 1)
		}
	})
}
