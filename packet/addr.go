package packet

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"unsafe"

	"golang.org/x/sys/unix"
)

// rawName is a socket address in the kernel's form, as sendmsg takes it and
// recvmsg fills it: written straight into the send queue and read straight
// from the receive batch, so addresses cost no allocation either way.
type rawName = [unix.SizeofSockaddrAny]byte

var (
	errNoPeer   = errors.New("packet: no destination: the socket is not connected (Dial)")
	errUnixDest = errors.New("packet: a unixgram socket sends to a path: WriteMsg with a *net.UnixAddr, or Reply")
)

// getPort and putPort read and write a port in network byte order.
func getPort(p *uint16) uint16 {
	b := (*[2]byte)(unsafe.Pointer(p))
	return uint16(b[0])<<8 | uint16(b[1])
}

func putPort(p *uint16, port uint16) {
	b := (*[2]byte)(unsafe.Pointer(p))
	b[0], b[1] = byte(port>>8), byte(port)
}

// encodeAddrPort writes to as a sockaddr of the socket's family into dst and
// returns its length: 0 (no address) for the zero AddrPort on a connected
// socket. An IPv4 address goes to a dual-stack socket as IPv4-mapped.
func (pc *Conn) encodeAddrPort(dst *rawName, to netip.AddrPort) (int, error) {
	if !to.IsValid() {
		if pc.connected {
			return 0, nil
		}
		return 0, errNoPeer
	}
	a := to.Addr()
	switch pc.family {
	case unix.AF_INET:
		a = a.Unmap()
		if !a.Is4() {
			return 0, fmt.Errorf("packet: IPv6 destination %v on an IPv4 socket", to)
		}
		sa := (*unix.RawSockaddrInet4)(unsafe.Pointer(dst))
		*sa = unix.RawSockaddrInet4{Family: unix.AF_INET, Addr: a.As4()}
		putPort(&sa.Port, to.Port())
		return unix.SizeofSockaddrInet4, nil
	case unix.AF_INET6:
		if a.Is4() && pc.network == "udp6" {
			return 0, fmt.Errorf("packet: IPv4 destination %v on an IPv6-only socket", to)
		}
		sa := (*unix.RawSockaddrInet6)(unsafe.Pointer(dst))
		*sa = unix.RawSockaddrInet6{Family: unix.AF_INET6, Addr: a.As16()}
		putPort(&sa.Port, to.Port())
		if z := a.Zone(); z != "" {
			id, err := zoneIndex(z)
			if err != nil {
				return 0, err
			}
			sa.Scope_id = id
		}
		return unix.SizeofSockaddrInet6, nil
	}
	return 0, errUnixDest
}

// encodeAddr is encodeAddrPort for a net.Addr: a *net.UDPAddr, a
// *net.UnixAddr (unixgram), or nil for the connected peer.
func (pc *Conn) encodeAddr(dst *rawName, to net.Addr) (int, error) {
	switch a := to.(type) {
	case nil:
		return pc.encodeAddrPort(dst, netip.AddrPort{})
	case *net.UDPAddr:
		if pc.family == unix.AF_UNIX {
			return 0, fmt.Errorf("packet: UDP destination %v on a unixgram socket", to)
		}
		return pc.encodeAddrPort(dst, a.AddrPort())
	case *net.UnixAddr:
		if pc.family != unix.AF_UNIX {
			return 0, fmt.Errorf("packet: unixgram destination %v on a UDP socket", to)
		}
		if a == nil {
			return pc.encodeAddrPort(dst, netip.AddrPort{})
		}
		return encodeUnix(dst, a.Name)
	}
	return 0, fmt.Errorf("packet: unsupported destination %T (want *net.UDPAddr or *net.UnixAddr)", to)
}

// encodeUnix writes a unixgram path, or an abstract name spelled "@name".
func encodeUnix(dst *rawName, name string) (int, error) {
	sa := (*unix.RawSockaddrUnix)(unsafe.Pointer(dst))
	if name == "" || len(name) >= len(sa.Path) {
		return 0, fmt.Errorf("packet: unixgram destination %q: empty or longer than %d bytes", name, len(sa.Path)-1)
	}
	sa.Family = unix.AF_UNIX
	for i := 0; i < len(name); i++ {
		sa.Path[i] = int8(name[i])
	}
	if name[0] == '@' {
		sa.Path[0] = 0 // abstract: counted exactly, no terminating NUL
		return 2 + len(name), nil
	}
	sa.Path[len(name)] = 0
	return 2 + len(name) + 1, nil
}

// decodeSource is a received datagram's source address: an IPv4 peer of a
// dual-stack socket comes unmapped; a unixgram source is the zero AddrPort.
func decodeSource(rsa *unix.RawSockaddrAny) netip.AddrPort {
	switch rsa.Addr.Family {
	case unix.AF_INET:
		sa := (*unix.RawSockaddrInet4)(unsafe.Pointer(rsa))
		return netip.AddrPortFrom(netip.AddrFrom4(sa.Addr), getPort(&sa.Port))
	case unix.AF_INET6:
		sa := (*unix.RawSockaddrInet6)(unsafe.Pointer(rsa))
		a := netip.AddrFrom16(sa.Addr)
		if a.Is4In6() {
			a = a.Unmap()
		} else if sa.Scope_id != 0 {
			a = a.WithZone(zoneName(sa.Scope_id))
		}
		return netip.AddrPortFrom(a, getPort(&sa.Port))
	}
	return netip.AddrPort{}
}

// unixName is a received unixgram source's name ("@name" when abstract, ""
// for an unbound sender); n is the address length the kernel gave.
func unixName(rsa *unix.RawSockaddrAny, n uint32) string {
	sa := (*unix.RawSockaddrUnix)(unsafe.Pointer(rsa))
	n = min(n, uint32(unix.SizeofSockaddrUnix))
	if n <= 2 {
		return ""
	}
	b := unsafe.Slice((*byte)(unsafe.Pointer(&sa.Path[0])), n-2)
	if b[0] == 0 {
		return "@" + string(b[1:])
	}
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}

// zoneIndex is an IPv6 zone's interface index: a number, or a name.
func zoneIndex(z string) (uint32, error) {
	if n, err := strconv.ParseUint(z, 10, 32); err == nil {
		return uint32(n), nil
	}
	ifi, err := net.InterfaceByName(z)
	if err != nil {
		return 0, fmt.Errorf("packet: IPv6 zone %q: %w", z, err)
	}
	return uint32(ifi.Index), nil
}

// zoneName spells an interface index as a zone; numeric, so that reading a
// link-local source makes no system call.
func zoneName(id uint32) string { return strconv.FormatUint(uint64(id), 10) }
