package peers

import (
	"fmt"
	"syscall"

	"golang.org/x/sys/unix"
)

// UDPBuffer is the SO_RCVBUF and SO_SNDBUF every UDP echo server asks for
// (the C one too, in cserver/udp_mmsg.c): the same socket buffers for all,
// so that a datagram lost is the server's doing, not its buffer's. The
// kernel caps it at net.core.rmem_max (wmem_max) and doubles it; the banner
// says what the socket got.
const UDPBuffer = 4 << 20

// udpBuffers describes the socket buffers rc's socket holds, for a banner.
func udpBuffers(rc syscall.RawConn) string {
	var rcv, snd int
	var err error
	if cerr := rc.Control(func(fd uintptr) {
		if rcv, err = unix.GetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_RCVBUF); err == nil {
			snd, err = unix.GetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_SNDBUF)
		}
	}); cerr != nil {
		err = cerr
	}
	if err != nil {
		return "socket buffers unknown: " + err.Error()
	}
	return fmt.Sprintf("SO_RCVBUF %d, SO_SNDBUF %d", rcv, snd)
}

// fdBuffers is udpBuffers for a socket known by its descriptor.
func fdBuffers(fd int) string { return udpBuffers(fdConn(fd)) }

// fdConn is a syscall.RawConn over a descriptor the caller keeps open.
type fdConn int

func (f fdConn) Control(fn func(uintptr)) error { fn(uintptr(f)); return nil }
func (fdConn) Read(func(uintptr) bool) error    { return syscall.EINVAL }
func (fdConn) Write(func(uintptr) bool) error   { return syscall.EINVAL }

var _ syscall.RawConn = fdConn(0)
