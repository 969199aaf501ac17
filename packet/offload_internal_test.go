package packet

import (
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/ringloop/ringloop/engine"
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

	l, err := engine.New()
	require.NoError(t, err)
	defer l.Close()
	h := &burstHandler{count: 10}
	pc, err := Listen(l, "udp4", "127.0.0.1:0", h, nil)
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
	st, err := engine.Submit(l, func() (state, error) { return state{pc.gso, h.errs, refusals}, nil }).Await(t.Context())
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

func (h *burstHandler) OnPacket(pc *Conn, _ []byte, from netip.AddrPort) {
	msg := make([]byte, 500)
	for i := range h.count {
		msg[0] = byte(i)
		_ = pc.WriteTo(msg, from)
	}
}
func (h *burstHandler) OnPacketError(*Conn, error) { h.errs++ }
func (h *burstHandler) OnPacketClose(*Conn, error) {}

// TestPacketGROCoalescedRun: a peer's GSO send of a run arrives coalesced
// on loopback (UDP_GRO), and the loop cuts it back into the datagrams sent.
func TestPacketGROCoalescedRun(t *testing.T) {
	l, err := engine.New()
	require.NoError(t, err)
	defer l.Close()
	got := make(chan []int, 1)
	h := &runHandler{want: 11, got: got}
	pc, err := Listen(l, "udp4", "127.0.0.1:0", h, nil)
	require.NoError(t, err)
	defer pc.Close()
	sendRun(t, pc.LocalAddr().(*net.UDPAddr), 1000, 10, 300)
	select {
	case sizes := <-got:
		require.Equal(t, []int{1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 300}, sizes)
	case <-time.After(30 * time.Second):
		t.Fatal("the run did not arrive")
	}
	var u unix.Utsname
	_ = unix.Uname(&u)
	if rel := unix.ByteSliceToString(u.Release[:]); !strings.HasPrefix(rel, "5.") {
		// 5.10's loopback delivers the run segmented: nothing to coalesce.
		require.True(t, h.coalesced, "the kernel coalesced the run (UDP_GRO) on %s", rel)
	}
}

// runHandler records the sizes of the first want datagrams (checking their
// numbering) and whether any came in a coalesced run.
type runHandler struct {
	want      int
	sizes     []int
	coalesced bool
	got       chan []int
}

func (h *runHandler) OnPacket(pc *Conn, b []byte, _ netip.AddrPort) {
	if pc.groSegment(pc.curCtrl) > 0 {
		h.coalesced = true
	}
	if len(b) == 0 || int(b[0]) != len(h.sizes) {
		h.sizes = append(h.sizes, -1) // out of order
	} else {
		h.sizes = append(h.sizes, len(b))
	}
	if len(h.sizes) == h.want {
		h.got <- h.sizes
	}
}
func (h *runHandler) OnPacketError(*Conn, error) {}
func (h *runHandler) OnPacketClose(*Conn, error) {}

// sendRun sends n datagrams of size and one of last to to, numbered in
// their first byte, in one sendmsg with UDP_SEGMENT (GSO).
func sendRun(t *testing.T, to *net.UDPAddr, size, n, last int) {
	t.Helper()
	c, err := net.DialUDP("udp4", nil, to)
	require.NoError(t, err)
	defer c.Close()
	buf := make([]byte, 0, size*n+last)
	for i := range n + 1 {
		seg := make([]byte, size)
		if i == n {
			seg = seg[:last]
		}
		seg[0] = byte(i)
		buf = append(buf, seg...)
	}
	oob := make([]byte, unix.CmsgSpace(2))
	cm := (*unix.Cmsghdr)(unsafe.Pointer(&oob[0]))
	cm.Level, cm.Type = unix.SOL_UDP, unix.UDP_SEGMENT
	cm.SetLen(unix.CmsgLen(2))
	*(*uint16)(unsafe.Pointer(&oob[unix.CmsgLen(0)])) = uint16(size)
	_, _, err = c.WriteMsgUDP(buf, oob, nil)
	require.NoError(t, err)
}
