package uring

import (
	"bytes"
	"errors"
	"testing"

	"golang.org/x/sys/unix"
)

// TestEncodeSockaddr: the raw layouts the kernel expects.
func TestEncodeSockaddr(t *testing.T) {
	b := make([]byte, sockaddrMax)
	n, err := encodeSockaddr(&unix.SockaddrInet4{Port: 0x1234, Addr: [4]byte{127, 0, 0, 1}}, b)
	if err != nil || n != 16 || !bytes.Equal(b[:8], []byte{2, 0, 0x12, 0x34, 127, 0, 0, 1}) {
		t.Fatalf("inet4: %d %v % x", n, err, b[:16])
	}
	n, err = encodeSockaddr(&unix.SockaddrInet6{Port: 80, Addr: [16]byte{15: 1}, ZoneId: 3}, b)
	if err != nil || n != 28 || b[0] != unix.AF_INET6 || b[3] != 80 || b[23] != 1 || b[24] != 3 {
		t.Fatalf("inet6: %d %v % x", n, err, b[:28])
	}
	n, err = encodeSockaddr(&unix.SockaddrUnix{Name: "/tmp/x"}, b)
	if err != nil || n != 2+6+1 || string(b[2:8]) != "/tmp/x" || b[8] != 0 {
		t.Fatalf("unix: %d %v % x", n, err, b[:10])
	}
	n, err = encodeSockaddr(&unix.SockaddrUnix{Name: "@abstract"}, b)
	if err != nil || n != 2+9 || b[2] != 0 || string(b[3:11]) != "abstract" {
		t.Fatalf("abstract unix: %d %v % x", n, err, b[:12])
	}
	if _, err := encodeSockaddr(&unix.SockaddrNetlink{}, b); !errors.Is(err, unix.EAFNOSUPPORT) {
		t.Fatalf("netlink: %v", err)
	}
}
