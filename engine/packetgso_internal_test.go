package engine

import (
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// TestPacketGSORefusedFallsBack: a socket whose coalesced send the kernel
// refuses as unable to coalesce (EIO: a device that cannot checksum) turns
// GSO off and sends the run again one datagram at a time: the peer gets
// every datagram, nothing is reported lost.
func TestPacketGSORefusedFallsBack(t *testing.T) {
	refusals := 0
	sendmmsgCall = func(fd int, hs []mmsghdr) (int, unix.Errno) {
		if hs[0].Hdr.Iovlen > 1 {
			refusals++
			return 0, unix.EIO
		}
		return sendmmsg(fd, hs)
	}
	defer func() { sendmmsgCall = sendmmsg }()

	l, err := New()
	require.NoError(t, err)
	defer l.Close()
	h := &burstHandler{count: 10}
	pc, err := ListenPacket(l, "udp4", "127.0.0.1:0", h)
	require.NoError(t, err)
	defer pc.Close()
	peer, err := net.DialUDP("udp4", nil, pc.LocalAddr().(*net.UDPAddr))
	require.NoError(t, err)
	defer peer.Close()
	_, err = peer.Write([]byte("go"))
	require.NoError(t, err)
	buf := make([]byte, 2048)
	require.NoError(t, peer.SetReadDeadline(time.Now().Add(30*time.Second)))
	for i := range h.count {
		n, err := peer.Read(buf)
		require.NoError(t, err, "datagram %d", i)
		require.Equal(t, 500, n)
		require.EqualValues(t, i, buf[0])
	}
	type state struct {
		gso        bool
		errs, refs int
	}
	st, err := Submit(l, func() (state, error) { return state{pc.gso, h.errs, refusals}, nil }).Await(t.Context())
	require.NoError(t, err)
	require.False(t, st.gso, "GSO off for the socket")
	require.Equal(t, 1, st.refs, "one refused coalesced send")
	require.Zero(t, st.errs, "nothing reported lost")
}

// burstHandler answers a datagram with count datagrams of 500 bytes, the
// first byte numbering them.
type burstHandler struct {
	count, errs int
}

func (h *burstHandler) OnPacket(pc *PacketConn, _ []byte, from netip.AddrPort) {
	msg := make([]byte, 500)
	for i := range h.count {
		msg[0] = byte(i)
		_ = pc.WriteTo(msg, from)
	}
}
func (h *burstHandler) OnPacketError(*PacketConn, error) { h.errs++ }
func (h *burstHandler) OnPacketClose(*PacketConn, error) {}
