package uring

import (
	"encoding/binary"
	"unsafe"

	"golang.org/x/sys/unix"
)

// sockaddrMax is the room kept per op for a raw sockaddr (sockaddr_storage).
const sockaddrMax = 128

// encodeSockaddr writes sa in the kernel's raw layout into b (at least
// sockaddrMax bytes) and returns its length, or unix.EAFNOSUPPORT.
func encodeSockaddr(sa unix.Sockaddr, b []byte) (int, error) {
	clear(b[:sockaddrMax])
	switch a := sa.(type) {
	case *unix.SockaddrInet4:
		*(*uint16)(unsafe.Pointer(&b[0])) = unix.AF_INET
		binary.BigEndian.PutUint16(b[2:], uint16(a.Port))
		copy(b[4:8], a.Addr[:])
		return unix.SizeofSockaddrInet4, nil
	case *unix.SockaddrInet6:
		*(*uint16)(unsafe.Pointer(&b[0])) = unix.AF_INET6
		binary.BigEndian.PutUint16(b[2:], uint16(a.Port))
		copy(b[8:24], a.Addr[:])
		*(*uint32)(unsafe.Pointer(&b[24])) = a.ZoneId
		return unix.SizeofSockaddrInet6, nil
	case *unix.SockaddrUnix:
		name := a.Name
		if len(name) == 0 || len(name) > 107 {
			return 0, unix.EINVAL
		}
		*(*uint16)(unsafe.Pointer(&b[0])) = unix.AF_UNIX
		copy(b[2:], name)
		n := 2 + len(name)
		if name[0] == '@' { // abstract socket: leading NUL, no terminator
			b[2] = 0
			return n, nil
		}
		return n + 1, nil
	}
	return 0, unix.EAFNOSUPPORT
}
