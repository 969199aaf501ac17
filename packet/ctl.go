package packet

import (
	"errors"
	"net"

	"github.com/ringloop/ringloop/internal/packetctl"
)

func init() {
	packetctl.WriteMsg = func(c any, b, oob []byte, to net.Addr) error { return c.(*Conn).writeMsg(b, oob, to) }
	packetctl.Control = func(c any, f func(fd uintptr)) error { return c.(*Conn).rawControl(f) }
}

// errCtrlSize refuses control messages longer than a queued datagram's
// record holds (255 bytes; a UDP_SEGMENT, an ECN and a pktinfo message take
// under 100).
var errCtrlSize = errors.New("packet: control messages over 255 bytes")

// writeMsg is WriteToAddr with the caller's control messages, which the
// kernel applies to the datagram (UDP_SEGMENT splits it into a GSO run).
func (pc *Conn) writeMsg(b, oob []byte, to net.Addr) error {
	var name rawName
	n, err := pc.encodeAddr(&name, to)
	if err == nil && len(oob) > 255 {
		err = errCtrlSize
	}
	switch {
	case pc.closeCalled.Load():
		return errPacketClosed
	case err != nil:
		return pc.packetError("write", nil, err)
	}
	return pc.write(name[:n], oob, b)
}

// rawControl runs f with the fd on the loop, which alone closes it.
func (pc *Conn) rawControl(f func(fd uintptr)) error {
	run := func(pc *Conn) error {
		if pc.st != packetOpen {
			return errPacketClosed
		}
		f(uintptr(pc.fd))
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
