package packet

import (
	"net/netip"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/ringloop/ringloop/engine"
)

type nopPacketHandler struct{}

func (nopPacketHandler) OnPacket(*Conn, []byte, netip.AddrPort) {}
func (nopPacketHandler) OnPacketError(*Conn, error)             {}
func (nopPacketHandler) OnPacketClose(*Conn, error)             {}

// TestPacketSocketOptions: the options reach the socket (read back with
// getsockopt): buffer sizes, TOS, hop limits, pktinfo, SO_REUSEPORT, and
// IPV6_V6ONLY on for udp6, off for a dual-stack udp socket.
func TestPacketSocketOptions(t *testing.T) {
	l, err := engine.New()
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	opts := &Options{ReusePort: true, SendBuffer: 64 << 10, RecvBuffer: 128 << 10,
		TOS: 0x2e, HopLimit: 17, MulticastHopLimit: 3, MulticastInterface: "lo", ReceiveInfo: true}
	for _, c := range []struct {
		network, addr string
		want          [][3]int // level, option, value
	}{
		{"udp4", "127.0.0.1:0", [][3]int{
			{unix.IPPROTO_IP, unix.IP_TOS, 0x2e}, {unix.IPPROTO_IP, unix.IP_TTL, 17},
			{unix.IPPROTO_IP, unix.IP_MULTICAST_TTL, 3}, {unix.IPPROTO_IP, unix.IP_PKTINFO, 1},
			{unix.IPPROTO_IP, unix.IP_RECVTOS, 1},
		}},
		{"udp6", "[::1]:0", [][3]int{
			{unix.IPPROTO_IPV6, unix.IPV6_V6ONLY, 1}, {unix.IPPROTO_IPV6, unix.IPV6_TCLASS, 0x2e},
			{unix.IPPROTO_IPV6, unix.IPV6_UNICAST_HOPS, 17}, {unix.IPPROTO_IPV6, unix.IPV6_MULTICAST_HOPS, 3},
			{unix.IPPROTO_IPV6, unix.IPV6_RECVPKTINFO, 1}, {unix.IPPROTO_IPV6, unix.IPV6_RECVTCLASS, 1},
		}},
		{"udp", "[::]:0", [][3]int{{unix.IPPROTO_IPV6, unix.IPV6_V6ONLY, 0}, {unix.IPPROTO_IP, unix.IP_TOS, 0x2e}}},
	} {
		pc, err := Listen(l, c.network, c.addr, nopPacketHandler{}, opts)
		if err != nil {
			if c.network != "udp4" {
				t.Logf("%s: %v (no IPv6 here)", c.network, err)
				continue
			}
			t.Fatal(err)
		}
		want := append(c.want, [3]int{unix.SOL_SOCKET, unix.SO_REUSEPORT, 1})
		for _, w := range want {
			if v, err := unix.GetsockoptInt(pc.fd, w[0], w[1]); err != nil || v != w[2] {
				t.Errorf("%s: option %d/%d = %d, %v; want %d", c.network, w[0], w[1], v, err, w[2])
			}
		}
		// The kernel doubles what SO_SNDBUF and SO_RCVBUF ask for.
		if v, _ := unix.GetsockoptInt(pc.fd, unix.SOL_SOCKET, unix.SO_SNDBUF); v != 2*(64<<10) {
			t.Errorf("%s: SO_SNDBUF %d", c.network, v)
		}
		if v, _ := unix.GetsockoptInt(pc.fd, unix.SOL_SOCKET, unix.SO_RCVBUF); v != 2*(128<<10) {
			t.Errorf("%s: SO_RCVBUF %d", c.network, v)
		}
		pc.Close()
	}
}
