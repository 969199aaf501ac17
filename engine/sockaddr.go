package engine

import (
	"fmt"
	"net"
	"net/netip"
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// resolve turns network and address into a socket family and sockaddr.
func resolve(network, addr string) (int, unix.Sockaddr, error) {
	switch network {
	case "tcp", "tcp4", "tcp6":
		ta, err := net.ResolveTCPAddr(network, addr)
		if err != nil {
			return 0, nil, err
		}
		ip := ta.IP
		if ip4 := ip.To4(); ip4 != nil && network != "tcp6" {
			sa := &unix.SockaddrInet4{Port: ta.Port}
			copy(sa.Addr[:], ip4)
			return unix.AF_INET, sa, nil
		}
		if ip == nil {
			if network == "tcp4" {
				return unix.AF_INET, &unix.SockaddrInet4{Port: ta.Port}, nil
			}
			return unix.AF_INET6, &unix.SockaddrInet6{Port: ta.Port}, nil
		}
		sa := &unix.SockaddrInet6{Port: ta.Port}
		copy(sa.Addr[:], ip.To16())
		if ta.Zone != "" {
			if ifi, err := net.InterfaceByName(ta.Zone); err == nil {
				sa.ZoneId = uint32(ifi.Index)
			}
		}
		return unix.AF_INET6, sa, nil
	case "unix":
		return unix.AF_UNIX, &unix.SockaddrUnix{Name: addr}, nil
	}
	return 0, nil, fmt.Errorf("engine: unsupported network %q (want tcp, tcp4, tcp6 or unix)", network)
}

func sockaddrToAddr(sa unix.Sockaddr, network string) net.Addr {
	switch a := sa.(type) {
	case *unix.SockaddrInet4:
		return net.TCPAddrFromAddrPort(netip.AddrPortFrom(netip.AddrFrom4(a.Addr), uint16(a.Port)))
	case *unix.SockaddrInet6:
		return net.TCPAddrFromAddrPort(netip.AddrPortFrom(netip.AddrFrom16(a.Addr), uint16(a.Port)))
	case *unix.SockaddrUnix:
		return &net.UnixAddr{Name: a.Name, Net: "unix"}
	}
	return nil
}

// stdSockaddrToAddr is sockaddrToAddr for package syscall's addresses: it
// copies them into x/sys/unix's (on the stack) so that one switch builds both.
func stdSockaddrToAddr(sa syscall.Sockaddr) net.Addr {
	switch a := sa.(type) {
	case *syscall.SockaddrInet4:
		return sockaddrToAddr(&unix.SockaddrInet4{Port: a.Port, Addr: a.Addr}, "")
	case *syscall.SockaddrInet6:
		return sockaddrToAddr(&unix.SockaddrInet6{Port: a.Port, ZoneId: a.ZoneId, Addr: a.Addr}, "")
	case *syscall.SockaddrUnix:
		return sockaddrToAddr(&unix.SockaddrUnix{Name: a.Name}, "")
	}
	return nil
}

// newSocket makes a non-blocking, close-on-exec stream socket.
func newSocket(family int) (int, error) {
	fd, err := unix.Socket(family, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, os.NewSyscallError("socket", err)
	}
	return fd, nil
}

// applyConnOptions sets the per-connection socket options. Buffer sizes
// are set only where withBuffers says: an accepted socket inherits them from
// its listener, and shrinking the window of an established connection can
// stall it for a zero-window probe's backoff.
func applyConnOptions(fd int, family int, c *connConfig, withBuffers bool) error {
	if family != unix.AF_UNIX && c.noDelay {
		if err := unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1); err != nil {
			return fmt.Errorf("engine: TCP_NODELAY: %w", err)
		}
	}
	if family != unix.AF_UNIX && c.keepAlive > 0 {
		secs := int(max(c.keepAlive/time.Second, 1))
		for _, o := range [][3]int{
			{unix.SOL_SOCKET, unix.SO_KEEPALIVE, 1},
			{unix.IPPROTO_TCP, unix.TCP_KEEPIDLE, secs},
			{unix.IPPROTO_TCP, unix.TCP_KEEPINTVL, secs},
		} {
			if err := unix.SetsockoptInt(fd, o[0], o[1], o[2]); err != nil {
				return fmt.Errorf("engine: keep-alive: %w", err)
			}
		}
	}
	if !withBuffers {
		return nil
	}
	return applySocketBuffers(fd, c)
}

// applySocketBuffers sets SO_SNDBUF and SO_RCVBUF when configured.
func applySocketBuffers(fd int, c *connConfig) error {
	if c.sndBuf > 0 {
		if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_SNDBUF, c.sndBuf); err != nil {
			return fmt.Errorf("engine: SO_SNDBUF: %w", err)
		}
	}
	if c.rcvBuf > 0 {
		if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUF, c.rcvBuf); err != nil {
			return fmt.Errorf("engine: SO_RCVBUF: %w", err)
		}
	}
	return nil
}
