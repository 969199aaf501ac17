package packet

import (
	"errors"
	"syscall"
)

// SyscallConn gives the socket's fd to what sets its options
// (getsockopt/setsockopt; quic-go's OOBCapablePacketConn asks for it):
// Control runs f with the fd on the loop, which alone closes it, and waits
// for it; Read and Write refuse, the loop alone doing the socket's I/O.
// Once Control has run, receives make room for control messages, so
// those f asked the kernel for (IP_RECVTOS, IP_PKTINFO...) reach
// Info.OOB.
func (pc *Conn) SyscallConn() (syscall.RawConn, error) { return rawConn{pc}, nil }

// rawConn is SyscallConn's syscall.RawConn.
type rawConn struct{ pc *Conn }

// errRawIO refuses I/O on the fd behind the loop.
var errRawIO = errors.New("packet: the loop does the socket's I/O; RawConn offers Control only")

func (c rawConn) Control(f func(fd uintptr)) error {
	if err := c.pc.rawControl(f); err != nil {
		return c.pc.packetError("raw-control", nil, err)
	}
	return nil
}

func (c rawConn) Read(func(fd uintptr) bool) error {
	return c.pc.packetError("raw-read", nil, errRawIO)
}
func (c rawConn) Write(func(fd uintptr) bool) error {
	return c.pc.packetError("raw-write", nil, errRawIO)
}

// rawControl runs f with the fd on the loop, which alone closes it.
func (pc *Conn) rawControl(f func(fd uintptr)) error {
	run := func(pc *Conn) error {
		if pc.st != packetOpen {
			return errPacketClosed
		}
		f(uintptr(pc.fd))
		if !pc.cfg.ctrl {
			pc.cfg.ctrl = true
			pc.updateInterest() // a RECVMSG armed without their room is replaced
		}
		return nil
	}
	if pc.loop.InEventLoop() {
		return run(pc)
	}
	done := make(chan error, 1)
	t := &packetTask{pc, func(pc *Conn) { done <- run(pc) }}
	if pc.in.Control(t) != nil {
		return errPacketClosed
	}
	return <-done
}
