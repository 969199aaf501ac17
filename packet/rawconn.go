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
	if pc.loop.InEventLoop() {
		return pc.runControl(f, nil)
	}
	done := make(chan error, 1)
	t := &packetTask{pc, func(pc *Conn) {
		if err := pc.runControl(f, done); err != nil {
			done <- err
		}
	}}
	if pc.in.Control(t) != nil {
		return errPacketClosed
	}
	return <-done
}

// runControl runs f (on the loop). The first Control makes receives room
// for control messages: a RECVMSG armed without it is replaced, and done
// (a caller off the loop) is answered once the cancelled one has ended, so
// every datagram sent after Control returns is received with room for
// what f asked the kernel for.
func (pc *Conn) runControl(f func(fd uintptr), done chan<- error) error {
	if pc.st != packetOpen {
		return errPacketClosed
	}
	f(uintptr(pc.fd))
	if !pc.cfg.ctrl {
		pc.cfg.ctrl = true
		pc.updateInterest()
	}
	if done != nil {
		if pc.recvCancelling {
			pc.ctrlWait = append(pc.ctrlWait, done)
		} else {
			done <- nil
		}
	}
	return nil
}

// rearmed answers the Control calls waiting for a RECVMSG's replacement.
func (pc *Conn) rearmed() {
	for i, done := range pc.ctrlWait {
		done <- nil
		pc.ctrlWait[i] = nil
	}
	pc.ctrlWait = pc.ctrlWait[:0]
}
