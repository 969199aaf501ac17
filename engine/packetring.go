package engine

import (
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/ringloop/ringloop/internal/driver"
)

// ringIO receives with the driver's multishot RECVMSG into a provided
// buffer ring (driver.MsgReceiver, io_uring on 6.0+): the socket's receive
// is one op, armed while the socket reads, and each of its completions is
// one datagram, with its source and control messages, delivered through
// deliverOne as soon as the loop reaps it. The kernel copies each datagram
// once, into a buffer the ring lends, with no system call of the loop's
// own. Sends are mmsgIO's.
type ringIO struct {
	mmsgIO
	rx driver.MsgReceiver
}

// receive is never asked for: a socket on ringIO does not wait for POLLIN.
func (ringIO) receive(*PacketConn) bool { return false }

// packetRing lets tests and benchmarks turn the ring receive off, to run
// mmsgIO on the same driver.
var packetRing = true

// pickDatagramIO returns the receive path for a socket configured as c on
// l: the ring's where the driver has it and a whole datagram of c.maxSize
// fits its buffers, else recvmmsg on readiness.
func pickDatagramIO(l *Loop, c packetConfig) datagramIO {
	if mr, ok := l.drv.(driver.MsgReceiver); ok && packetRing && c.maxSize <= mr.RecvMsgRoom() {
		return ringIO{rx: mr}
	}
	return mmsgIO{}
}

// updateRecv arms the socket's RECVMSG while it reads, and cancels it when
// it stops (paused or closing); a cancelled one is armed again, if need
// be, once its final completion came.
func (pc *PacketConn) updateRecv() {
	r, ok := pc.io.(ringIO)
	if !ok {
		return
	}
	reading := pc.st == packetOpen && !pc.paused
	switch {
	case reading && !pc.recvArmed:
		pc.recvArmed = true
		r.rx.RecvMsg(pc.fd, pc.tag(opRecv), pc.cfg.info)
	case !reading && pc.recvArmed && !pc.recvCancelling:
		pc.recvCancelling = true
		pc.loop.drv.Cancel(pc.fd, pc.tag(opRecv))
	}
}

// received handles the RECVMSG's completions: a datagram is delivered (one
// already received is, even while paused); the final one says why it
// ended, and the socket arms another unless it stops reading.
func (pc *PacketConn) received(c *driver.Completion) {
	if m := c.Msg; m != nil {
		if pc.st == packetOpen && len(m.Name) >= unix.SizeofSockaddrAny {
			pc.recvOne(c.Data, m)
		}
		return
	}
	if c.More {
		return
	}
	pc.recvArmed, pc.recvCancelling = false, false
	if c.Res < 0 && c.Res != -int32(unix.ECANCELED) && pc.st == packetOpen {
		errno := unix.Errno(-c.Res)
		if !pc.recvFailed("recvmsg", errno) && pc.st == packetOpen {
			// Not an error ICMP left (those fail one receive): the ring
			// cannot serve this socket; readiness and recvmmsg can.
			pc.io = mmsgIO{}
		}
	}
	pc.updateInterest()
}

// recvOne delivers one datagram of the ring: b is its payload as copied.
func (pc *PacketConn) recvOne(b []byte, m *driver.Msg) {
	defer pc.recoverCallback("OnPacket")
	name := (*unix.RawSockaddrAny)(unsafe.Pointer(&m.Name[0]))
	pc.deliverOne(b[:min(len(b), pc.cfg.maxSize)], m.Size, m.Flags, name, m.NameLen, m.Control)
	pc.flushIfFull()
}
