package packet_test

import (
	"bytes"
	"context"
	"errors"
	"net"
	"net/netip"
	"runtime"
	"strconv"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/internal/testenv"
	"github.com/ringloop/ringloop/packet"
)

// TestPacketMulticastUDP: two sockets join a group on the loopback
// interface and both receive what a third sends to it (leaving by
// MulticastInterface); after one leaves, only the other does. IPv4 runs on
// the host's loopback. The host's lo has no IPv6 multicast route (lo lacks
// IFF_MULTICAST, and the kernel turns routes through lo into reject
// routes), so IPv6 runs in a private network namespace of the test's own
// thread, whose lo is given IFF_MULTICAST and a local route for ff00::/8.
func TestPacketMulticastUDP(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		multicastCase(t, c, "udp4", netip.MustParseAddr("239.255.42.99"), "127.0.0.1")
		t.Run("ipv6", func(t *testing.T) {
			// The thread stays in the namespace: the goroutine ends locked,
			// so the runtime retires the thread with it.
			runtime.LockOSThread()
			if err := privateNetns(); err != nil {
				t.Skipf("IPv6 multicast on loopback needs a private network namespace, which this process may not make (CAP_SYS_ADMIN): %v", err)
			}
			multicastCase(t, c, "udp6", netip.MustParseAddr("ff15::4242"), "::1")
		})
	})
}

func multicastCase(t *testing.T, c testenv.Combo, network string, group netip.Addr, local string) {
	l := newLoop(t, c)
	lo, err := net.InterfaceByName("lo")
	require.NoError(t, err)
	var hs [2]*pktHandler
	var got [2]chan []byte
	var rx [2]*packet.Conn
	port := "0"
	for i := range rx {
		hs[i], got[i] = newPktHandler(), make(chan []byte, 8)
		ch := got[i]
		hs[i].onPacket = func(_ *packet.Conn, b []byte, _ netip.AddrPort) { ch <- bytes.Clone(b) }
		rx[i] = listenPacket(t, l, network, net.JoinHostPort(group.String(), port), hs[i])
		port = strconv.Itoa(rx[i].LocalAddr().(*net.UDPAddr).Port)
		require.NoError(t, rx[i].JoinGroup(lo, group))
	}
	to := netip.AddrPortFrom(group, uint16(rx[0].LocalAddr().(*net.UDPAddr).Port))
	tx := listenPacket(t, l, network, net.JoinHostPort(local, "0"), newPktHandler(),
		&packet.Options{MulticastInterface: "lo", MulticastHopLimit: 2})
	recv := func(i int, want string) {
		t.Helper()
		select {
		case b := <-got[i]:
			require.Equal(t, want, string(b), "socket %d", i)
		case <-time.After(30 * time.Second):
			t.Fatalf("socket %d received nothing", i)
		}
	}
	require.NoError(t, tx.WriteTo([]byte("to both"), to))
	recv(0, "to both")
	recv(1, "to both")

	require.NoError(t, rx[0].LeaveGroup(lo, group))
	require.NoError(t, tx.WriteTo([]byte("to one"), to))
	recv(1, "to one")
	// The kernel queues a group's datagram on every member in one pass, so
	// both sockets became readable together; one loop round trip after the
	// member's delivery, a socket still in the group would have had it too.
	_, err = engine.Submit(l, func() (struct{}, error) { return struct{}{}, nil }).Await(context.Background())
	require.NoError(t, err)
	if len(got[0]) > 0 {
		t.Fatalf("delivered after LeaveGroup: %q (and %d more)", <-got[0], len(got[0]))
	}
	require.Empty(t, hs[0].errs)
}

// privateNetns moves the calling (locked) thread into a new network
// namespace whose lo is up, multicast-capable and routes ff00::/8 locally.
func privateNetns() error {
	if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
		return err
	}
	fd, err := unix.Socket(unix.AF_INET6, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return err
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP | unix.IFF_MULTICAST)
	if err := unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr); err != nil {
		return err
	}
	lo, err := net.InterfaceByName("lo")
	if err != nil {
		return err
	}
	// struct in6_rtmsg: a local (RTF_LOCAL) route, which the kernel does
	// not turn into a reject route on lo.
	rt := struct {
		dst, src, gw   [16]byte
		typ            uint32
		dstLen, srcLen uint16
		metric         uint32
		info           uintptr
		flags          uint32
		ifindex        int32
	}{typ: unix.RTN_LOCAL, dstLen: 8, metric: 1, flags: unix.RTF_UP | rtfLocal, ifindex: int32(lo.Index)}
	rt.dst[0] = 0xff
	if _, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), unix.SIOCADDRT, uintptr(unsafe.Pointer(&rt))); e != 0 {
		return errors.Join(errors.New("adding a local route for ff00::/8"), e)
	}
	return nil
}

// rtfLocal is RTF_LOCAL (linux/ipv6_route.h).
const rtfLocal = 0x80000000
