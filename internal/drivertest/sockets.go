package drivertest

import (
	"net"
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

// CountFDs returns how many fds the process has open, from /proc/self/fd.
func CountFDs(t testing.TB) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatalf("CountFDs: %v", err)
	}
	return len(ents) - 1 // the directory's own fd
}

// Socket returns a new non-blocking, close-on-exec TCP/IPv4 socket.
func Socket(t testing.TB) int {
	t.Helper()
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatalf("socket: %v", err)
	}
	return fd
}

// Listen returns a non-blocking listening socket on 127.0.0.1 (a free port)
// and its address.
func Listen(t testing.TB, backlog int) (int, *unix.SockaddrInet4) {
	t.Helper()
	fd := Socket(t)
	sa := &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}
	if err := unix.Bind(fd, sa); err != nil {
		unix.Close(fd)
		t.Fatalf("bind: %v", err)
	}
	if err := unix.Listen(fd, backlog); err != nil {
		unix.Close(fd)
		t.Fatalf("listen: %v", err)
	}
	return fd, LocalAddr(t, fd)
}

// LocalAddr returns the IPv4 address fd is bound to.
func LocalAddr(t testing.TB, fd int) *unix.SockaddrInet4 {
	t.Helper()
	sa, err := unix.Getsockname(fd)
	if err != nil {
		t.Fatalf("getsockname: %v", err)
	}
	in4, ok := sa.(*unix.SockaddrInet4)
	if !ok {
		t.Fatalf("getsockname: %T", sa)
	}
	return in4
}

// TCPPair returns a connected loopback pair: fd, a raw non-blocking socket
// for the driver, and peer, its other end as a net.TCPConn for the test's
// goroutines. The caller owns fd; peer is closed at cleanup.
func TCPPair(t testing.TB) (int, *net.TCPConn) {
	t.Helper()
	ln, err := net.ListenTCP("tcp4", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	defer ln.Close()
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatalf("socket: %v", err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	if err := unix.Connect(fd, &unix.SockaddrInet4{Port: port, Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		unix.Close(fd)
		t.Fatalf("connect: %v", err)
	}
	peer, err := ln.AcceptTCP()
	if err != nil {
		unix.Close(fd)
		t.Fatalf("accept: %v", err)
	}
	t.Cleanup(func() { peer.Close() })
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(fd)
		t.Fatalf("nonblock: %v", err)
	}
	return fd, peer
}

// SetBuffers sets SO_SNDBUF and SO_RCVBUF of fd (0 leaves one alone).
func SetBuffers(t testing.TB, fd, snd, rcv int) {
	t.Helper()
	if snd > 0 {
		if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_SNDBUF, snd); err != nil {
			t.Fatalf("SO_SNDBUF: %v", err)
		}
	}
	if rcv > 0 {
		if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUF, rcv); err != nil {
			t.Fatalf("SO_RCVBUF: %v", err)
		}
	}
}

// Linger0 makes close(fd) reset the connection (no TIME_WAIT left behind).
func Linger0(fd int) {
	unix.SetsockoptLinger(fd, unix.SOL_SOCKET, unix.SO_LINGER, &unix.Linger{Onoff: 1, Linger: 0})
}
