package packet

import (
	"cmp"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"

	"golang.org/x/sys/unix"
)

// Options are the settings of a datagram socket (Listen, Dial); nil, or a
// zero field, means the default.
type Options struct {
	// MaxSize is the longest datagram received whole, in bytes (default
	// 65535, the most UDP carries). A longer one is dropped and reported
	// to OnPacketError (ErrTruncated). A loop's sockets share their
	// receive buffers: Batch slots of the largest MaxSize among them.
	MaxSize int
	// Batch is how many datagrams one recvmmsg or sendmmsg system call
	// moves at most (default 32, at most 1024).
	Batch int
	// TOS is the IPv4 TOS or IPv6 traffic class byte of what the socket
	// sends (DSCP and ECN bits; IP_TOS, IPV6_TCLASS).
	TOS int
	// HopLimit is the IPv4 TTL or IPv6 hop limit of unicast datagrams
	// sent (IP_TTL, IPV6_UNICAST_HOPS; default the kernel's).
	HopLimit int
	// MulticastHopLimit is the same for multicast datagrams (default 1:
	// they stay on the link).
	MulticastHopLimit int
	// MulticastInterface names the interface multicast datagrams leave by
	// (default: the kernel's route for the group).
	MulticastInterface string
	// ReceiveInfo asks the kernel for each datagram's destination address,
	// interface and TOS byte (IP_PKTINFO and IP_RECVTOS, or
	// IPV6_RECVPKTINFO and IPV6_RECVTCLASS): Info reports them during
	// OnPacket, and Reply answers from the address the datagram was sent
	// to, which a server bound to a wildcard address on a multi-homed host
	// needs.
	ReceiveInfo bool
	// SendBuffer and RecvBuffer set SO_SNDBUF and SO_RCVBUF in bytes
	// (default: net.core.wmem_default and rmem_default).
	SendBuffer, RecvBuffer int
	// ReusePort sets SO_REUSEPORT on a Listen socket: one socket per loop
	// of a group on one port, the kernel spreading the peers.
	ReusePort bool
	// AsyncWriteLimit bounds the bytes the socket holds unsent (queued on
	// the loop while the kernel's send buffer is full, and by other
	// goroutines' WriteTo), each datagram counting its payload plus 64
	// bytes (default 4 MiB, as engine.BufferLimits.AsyncWrite's). The
	// send buffers a burst grows are kept, up to about 1.5× this, so that
	// the next burst allocates nothing.
	AsyncWriteLimit int
}

// wantCtrl reports whether receives make room for control messages: only
// when the socket may have asked for some, the room costing the io_uring
// receive buffer space per datagram.
func (c *packetConfig) wantCtrl() bool { return c.info || c.gro || c.ctrl }

// packetConfig is Options after defaults.
type packetConfig struct {
	maxSize, batch   int
	tos, hops, mhops int
	mcastIf          string
	info             bool
	gro              bool // set by the socket: the kernel coalesces (offload.go)
	sndBuf, rcvBuf   int
	reusePort        bool
	asyncLimit       int
	// ctrl is set once SyscallConn's Control has run: what it set may ask
	// the kernel for control messages (quic-go's IP_RECVTOS, IP_PKTINFO),
	// so receives make room for them from then on.
	ctrl bool
}

const (
	defaultPacketMaxSize = 65535
	defaultPacketBatch   = 32
	maxPacketBatch       = 1024 // UIO_MAXIOV: the kernel's limit on vlen
	// defaultAsyncWriteLimit is engine.BufferLimits.AsyncWrite's default.
	defaultAsyncWriteLimit = 4 << 20
)

// config checks o and applies the defaults; nil is all defaults.
func (o *Options) config() (packetConfig, error) {
	var z Options
	if o == nil {
		o = &z
	}
	if o.MaxSize < 0 || o.Batch < 0 || o.Batch > maxPacketBatch || o.TOS < 0 || o.TOS > 255 ||
		o.HopLimit < 0 || o.HopLimit > 255 || o.MulticastHopLimit < 0 || o.MulticastHopLimit > 255 ||
		o.SendBuffer < 0 || o.RecvBuffer < 0 || o.AsyncWriteLimit < 0 {
		return packetConfig{}, fmt.Errorf("packet: options %+v (expected MaxSize, buffers and AsyncWriteLimit >= 0, Batch 0..%d, TOS and hop limits 0..255; 0 keeps the default)",
			*o, maxPacketBatch)
	}
	return packetConfig{
		maxSize: cmp.Or(o.MaxSize, defaultPacketMaxSize), batch: cmp.Or(o.Batch, defaultPacketBatch),
		tos: o.TOS, hops: o.HopLimit, mhops: o.MulticastHopLimit, mcastIf: o.MulticastInterface, info: o.ReceiveInfo,
		sndBuf: o.SendBuffer, rcvBuf: o.RecvBuffer, reusePort: o.ReusePort,
		asyncLimit: cmp.Or(o.AsyncWriteLimit, defaultAsyncWriteLimit),
	}, nil
}

// resolvePacket turns a datagram network and address into a socket family
// and sockaddr.
func resolvePacket(network, addr string) (int, unix.Sockaddr, error) {
	switch network {
	case "udp", "udp4", "udp6":
	case "unixgram":
		return unix.AF_UNIX, &unix.SockaddrUnix{Name: addr}, nil
	default:
		return 0, nil, fmt.Errorf("packet: unsupported network %q (want udp, udp4, udp6 or unixgram)", network)
	}
	ua, err := net.ResolveUDPAddr(network, addr)
	if err != nil {
		return 0, nil, err
	}
	ap := ua.AddrPort()
	a := ap.Addr()
	switch {
	case !a.IsValid() || a.IsUnspecified() && a.Zone() == "":
		if network == "udp4" || network == "udp" && a.Is4() {
			return unix.AF_INET, &unix.SockaddrInet4{Port: int(ap.Port())}, nil
		}
		return unix.AF_INET6, &unix.SockaddrInet6{Port: int(ap.Port())}, nil
	case a.Unmap().Is4() && network != "udp6":
		return unix.AF_INET, &unix.SockaddrInet4{Port: int(ap.Port()), Addr: a.Unmap().As4()}, nil
	case a.Is4() || a.Is4In6():
		return 0, nil, fmt.Errorf("packet: %s address %s is not IPv6", network, a)
	case network == "udp4":
		return 0, nil, fmt.Errorf("packet: %s address %s is not IPv4", network, a)
	}
	sa := &unix.SockaddrInet6{Port: int(ap.Port()), Addr: a.As16()}
	if z := a.Zone(); z != "" {
		id, err := zoneIndex(z)
		if err != nil {
			return 0, nil, err
		}
		sa.ZoneId = id
	}
	return unix.AF_INET6, sa, nil
}

// packetAddr is sa as net names a datagram socket's address.
func packetAddr(sa unix.Sockaddr, network string) net.Addr {
	switch a := sa.(type) {
	case *unix.SockaddrInet4:
		return net.UDPAddrFromAddrPort(netip.AddrPortFrom(netip.AddrFrom4(a.Addr), uint16(a.Port)))
	case *unix.SockaddrInet6:
		ip := netip.AddrFrom16(a.Addr)
		if a.ZoneId != 0 {
			ip = ip.WithZone(zoneName(a.ZoneId))
		}
		return net.UDPAddrFromAddrPort(netip.AddrPortFrom(ip, uint16(a.Port)))
	case *unix.SockaddrUnix:
		return &net.UnixAddr{Name: a.Name, Net: "unixgram"}
	}
	return nil
}

// setup sets the socket's options, then binds it (op "listen") or connects
// it (op "dial") to sa.
func (pc *Conn) setup(op string, sa unix.Sockaddr) error {
	fd, c := pc.fd, &pc.cfg
	type opt struct {
		level, name, v int
		what           string
	}
	var opts []opt
	if pc.family == unix.AF_INET6 {
		opts = append(opts, opt{unix.IPPROTO_IPV6, unix.IPV6_V6ONLY, boolInt(pc.network == "udp6"), "IPV6_V6ONLY"})
	}
	if c.reusePort && op == "listen" && pc.family != unix.AF_UNIX {
		opts = append(opts, opt{unix.SOL_SOCKET, unix.SO_REUSEPORT, 1, "SO_REUSEPORT"})
	}
	if op == "listen" && bindsGroup(sa) {
		// Several sockets may bind one group's address, as with net.ListenMulticastUDP.
		opts = append(opts, opt{unix.SOL_SOCKET, unix.SO_REUSEADDR, 1, "SO_REUSEADDR"})
	}
	if c.sndBuf > 0 {
		opts = append(opts, opt{unix.SOL_SOCKET, unix.SO_SNDBUF, c.sndBuf, "SO_SNDBUF"})
	}
	if c.rcvBuf > 0 {
		opts = append(opts, opt{unix.SOL_SOCKET, unix.SO_RCVBUF, c.rcvBuf, "SO_RCVBUF"})
	}
	switch pc.family {
	case unix.AF_INET:
		opts = appendIf(opts, c.tos > 0, opt{unix.IPPROTO_IP, unix.IP_TOS, c.tos, "IP_TOS"})
		opts = appendIf(opts, c.hops > 0, opt{unix.IPPROTO_IP, unix.IP_TTL, c.hops, "IP_TTL"})
		opts = appendIf(opts, c.mhops > 0, opt{unix.IPPROTO_IP, unix.IP_MULTICAST_TTL, c.mhops, "IP_MULTICAST_TTL"})
		opts = appendIf(opts, c.info, opt{unix.IPPROTO_IP, unix.IP_PKTINFO, 1, "IP_PKTINFO"})
		opts = appendIf(opts, c.info, opt{unix.IPPROTO_IP, unix.IP_RECVTOS, 1, "IP_RECVTOS"})
	case unix.AF_INET6:
		// A dual-stack socket's IPv4 datagrams follow the IPv4 options.
		dual := pc.network != "udp6"
		opts = appendIf(opts, c.tos > 0, opt{unix.IPPROTO_IPV6, unix.IPV6_TCLASS, c.tos, "IPV6_TCLASS"})
		opts = appendIf(opts, c.tos > 0 && dual, opt{unix.IPPROTO_IP, unix.IP_TOS, c.tos, "IP_TOS"})
		opts = appendIf(opts, c.hops > 0, opt{unix.IPPROTO_IPV6, unix.IPV6_UNICAST_HOPS, c.hops, "IPV6_UNICAST_HOPS"})
		opts = appendIf(opts, c.hops > 0 && dual, opt{unix.IPPROTO_IP, unix.IP_TTL, c.hops, "IP_TTL"})
		opts = appendIf(opts, c.mhops > 0, opt{unix.IPPROTO_IPV6, unix.IPV6_MULTICAST_HOPS, c.mhops, "IPV6_MULTICAST_HOPS"})
		opts = appendIf(opts, c.info, opt{unix.IPPROTO_IPV6, unix.IPV6_RECVPKTINFO, 1, "IPV6_RECVPKTINFO"})
		opts = appendIf(opts, c.info, opt{unix.IPPROTO_IPV6, unix.IPV6_RECVTCLASS, 1, "IPV6_RECVTCLASS"})
	}
	for _, o := range opts {
		if err := unix.SetsockoptInt(fd, o.level, o.name, o.v); err != nil {
			return os.NewSyscallError("setsockopt "+o.what, err)
		}
	}
	if c.mcastIf != "" && pc.family != unix.AF_UNIX {
		ifi, err := net.InterfaceByName(c.mcastIf)
		if err != nil {
			return fmt.Errorf("packet: multicast interface: %w", err)
		}
		if err := setMulticastInterface(fd, pc.family, pc.network, ifi.Index); err != nil {
			return err
		}
	}
	if op == "listen" {
		if u, ok := sa.(*unix.SockaddrUnix); ok && u.Name != "" && u.Name[0] != '@' {
			pc.unlink = u.Name
		}
		if err := unix.Bind(fd, sa); err != nil {
			pc.unlink = ""
			return os.NewSyscallError("bind", err)
		}
		return nil
	}
	if pc.family == unix.AF_UNIX {
		// Autobind (an abstract name the kernel picks), so the peer can answer.
		if err := unix.Bind(fd, &unix.SockaddrUnix{}); err != nil {
			return os.NewSyscallError("bind", err)
		}
	}
	if err := unix.Connect(fd, sa); err != nil {
		return os.NewSyscallError("connect", err)
	}
	pc.connected, pc.raddr = true, packetAddr(sa, pc.network)
	return nil
}

// bindsGroup reports whether sa is a multicast group's address.
func bindsGroup(sa unix.Sockaddr) bool {
	switch a := sa.(type) {
	case *unix.SockaddrInet4:
		return netip.AddrFrom4(a.Addr).IsMulticast()
	case *unix.SockaddrInet6:
		return netip.AddrFrom16(a.Addr).IsMulticast()
	}
	return false
}

func appendIf[T any](s []T, ok bool, v T) []T {
	if ok {
		return append(s, v)
	}
	return s
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func setMulticastInterface(fd, family int, network string, index int) error {
	if family == unix.AF_INET || network != "udp6" {
		if err := unix.SetsockoptIPMreqn(fd, unix.IPPROTO_IP, unix.IP_MULTICAST_IF, &unix.IPMreqn{Ifindex: int32(index)}); err != nil {
			return os.NewSyscallError("setsockopt IP_MULTICAST_IF", err)
		}
	}
	if family == unix.AF_INET6 {
		if err := unix.SetsockoptInt(fd, unix.IPPROTO_IPV6, unix.IPV6_MULTICAST_IF, index); err != nil {
			return os.NewSyscallError("setsockopt IPV6_MULTICAST_IF", err)
		}
	}
	return nil
}

// JoinGroup joins the multicast group on interface ifi (nil: the one the
// kernel's route for the group picks), so the socket receives datagrams
// sent to the group on its port. From then on it receives only the groups
// it is in: JoinGroup turns Linux's IP_MULTICAST_ALL (or
// IPV6_MULTICAST_ALL) off, under which a socket bound to the port would
// receive every group any socket of the host joined. An IPv4 group may be
// joined on a dual-stack "udp" socket. Safe from any goroutine.
func (pc *Conn) JoinGroup(ifi *net.Interface, group netip.Addr) error {
	return pc.membership(true, ifi, group)
}

// LeaveGroup leaves a group JoinGroup joined. Safe from any goroutine.
func (pc *Conn) LeaveGroup(ifi *net.Interface, group netip.Addr) error {
	return pc.membership(false, ifi, group)
}

// groupOpts are the socket options of group membership for one IP
// version; names are those of join, leave and all, for errors.
type groupOpts struct {
	level, join, leave, all int
	names                   [3]string
}

var (
	groupV4 = groupOpts{unix.IPPROTO_IP, unix.IP_ADD_MEMBERSHIP, unix.IP_DROP_MEMBERSHIP, unix.IP_MULTICAST_ALL,
		[3]string{"IP_ADD_MEMBERSHIP", "IP_DROP_MEMBERSHIP", "IP_MULTICAST_ALL"}}
	groupV6 = groupOpts{unix.IPPROTO_IPV6, unix.IPV6_JOIN_GROUP, unix.IPV6_LEAVE_GROUP, unix.IPV6_MULTICAST_ALL,
		[3]string{"IPV6_JOIN_GROUP", "IPV6_LEAVE_GROUP", "IPV6_MULTICAST_ALL"}}
)

func (pc *Conn) membership(join bool, ifi *net.Interface, group netip.Addr) error {
	op := "leave group"
	if join {
		op = "join group"
	}
	if !group.IsMulticast() {
		return pc.packetError(op, nil, fmt.Errorf("packet: %v is not a multicast address", group))
	}
	index := 0
	if ifi != nil {
		index = ifi.Index
	}
	err := pc.in.OnLoop(func() error {
		if pc.st != packetOpen {
			return errPacketClosed
		}
		g := group.Unmap()
		var o *groupOpts
		switch {
		case pc.family == unix.AF_UNIX:
			return errors.New("packet: multicast needs a UDP socket")
		case g.Is4():
			o = &groupV4
		case pc.family != unix.AF_INET6:
			return fmt.Errorf("packet: IPv6 group %v on an IPv4 socket", group)
		default:
			o = &groupV6
		}
		name, what := o.leave, o.names[1]
		if join {
			// Only the groups joined here, not every group the host joined.
			if err := unix.SetsockoptInt(pc.fd, o.level, o.all, 0); err != nil {
				return os.NewSyscallError("setsockopt "+o.names[2], err)
			}
			name, what = o.join, o.names[0]
		}
		var err error
		if g.Is4() {
			err = unix.SetsockoptIPMreqn(pc.fd, o.level, name, &unix.IPMreqn{Multiaddr: g.As4(), Ifindex: int32(index)})
		} else {
			err = unix.SetsockoptIPv6Mreq(pc.fd, o.level, name, &unix.IPv6Mreq{Multiaddr: g.As16(), Interface: uint32(index)})
		}
		return os.NewSyscallError("setsockopt "+what, err)
	})
	if err != nil {
		return pc.packetError(op, &net.UDPAddr{IP: group.AsSlice()}, err)
	}
	return nil
}
