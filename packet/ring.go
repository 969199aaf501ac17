package packet

import (
	"runtime"
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
// own. It sends with sendmmsg, as mmsgIO does. Its other send path (tx
// set: packetRingSend) hands the queue's oldest datagrams, up to Batch, to
// the driver as one chain of linked SENDMSG ops (driver.MsgSender) that
// the loop's next wait submits with its other ops; the chain's completion
// removes what it sent from the queue, in order, and the next chain
// follows. Measured on an echo in batches of 32 and 64, the chains cost
// the loop more CPU per datagram than sendmmsg (a request and a completion
// per datagram against one system call per batch), so sendmmsg is the
// default; the chains are kept, tested, for small batches and for
// segmentation offload to build on.
type ringIO struct {
	mmsgIO
	rx driver.MsgReceiver
	tx driver.MsgSender
}

// ringSend is a socket's SENDMSG chain (ringIO): its headers, which with
// the queue's buffer stay pinned while it is in flight.
type ringSend struct {
	hdrs     []unix.Msghdr
	iovs     []unix.Iovec
	pin      runtime.Pinner
	inflight int        // the queue's oldest datagrams the chain holds
	errno    unix.Errno // the chain's failure, reported before its end
}

// receive runs on readiness only for a socket whose RECVMSG failed for
// good (rx nil): recvmmsg then serves it. Otherwise it does not wait for
// POLLIN.
func (r ringIO) receive(pc *Conn) bool {
	if r.rx != nil {
		return false
	}
	return r.mmsgIO.receive(pc)
}

// ringRecv reports whether the socket receives by RECVMSG.
func (pc *Conn) ringRecv() bool {
	r, ok := pc.io.(ringIO)
	return ok && r.rx != nil
}

// packetRing lets tests and benchmarks turn the ring off, to run mmsgIO on
// the same driver; packetRingSend turns ringIO's SENDMSG chains on.
var packetRing, packetRingSend = true, false

// pickDatagramIO returns the receive path for a socket configured as c on
// a loop's driver drv: the ring's where the driver has it and a whole
// datagram of c.maxSize fits its buffers, else recvmmsg on readiness.
func pickDatagramIO(drv driver.Driver, c packetConfig) (datagramIO, *ringSend) {
	mr, ok := drv.(driver.MsgReceiver)
	ms, ok2 := drv.(driver.MsgSender)
	if ok && ok2 && packetRing && c.maxSize <= mr.RecvMsgRoom() {
		if !packetRingSend {
			return ringIO{rx: mr}, nil
		}
		return ringIO{rx: mr, tx: ms}, &ringSend{hdrs: make([]unix.Msghdr, c.batch), iovs: make([]unix.Iovec, c.batch)}
	}
	return mmsgIO{}, nil
}

// send hands the queue's oldest datagrams to the driver as one chain,
// unless one is in flight (its end sends the next). A closing socket's
// last try is mmsgIO's, at once; with a chain in flight there is none.
func (r ringIO) send(pc *Conn) error {
	if r.tx == nil {
		return r.mmsgIO.send(pc)
	}
	s, q := pc.rs, &pc.out
	if s.inflight > 0 || q.empty() {
		return nil
	}
	if pc.st != packetOpen {
		return r.mmsgIO.send(pc)
	}
	n := min(len(s.hdrs), len(q.msgs)-q.head)
	for k := range n {
		q.header(q.head+k, &s.hdrs[k], &s.iovs[k])
	}
	if len(q.buf) > 0 {
		s.pin.Pin(&q.buf[0])
	}
	s.pin.Pin(&s.hdrs[0])
	s.pin.Pin(&s.iovs[0])
	s.inflight = n
	r.tx.SendMsgs(pc.fd, pc.tag(driver.OpSend), s.hdrs[:n])
	return nil
}

// sent handles the chain's completions: a failure first (More), then the
// count sent before it. Those leave the queue; the failed one is reported
// as sendmmsg's would be, or on EAGAIN waits for room with the rest; then
// the next chain goes.
func (pc *Conn) sent(c *driver.Completion) {
	s := pc.rs
	if c.More {
		s.errno = unix.Errno(-c.Res)
		return
	}
	n, errno := int(c.Res), s.errno
	if c.Res < 0 { // never submitted
		n, errno = 0, unix.Errno(-c.Res)
	}
	s.errno, s.inflight = 0, 0
	s.pin.Unpin()
	if pc.st != packetOpen {
		pc.updateInterest() // a closing socket waited for it
		return
	}
	pc.out.advance(n)
	pc.counts.Out += uint64(n)
	if n > 0 {
		pc.idleOut = 0
	}
	switch errno {
	case 0:
	case unix.EAGAIN:
		pc.blocked = true
		pc.out.compact()
		if n == 0 {
			pc.sentNothing()
		}
		pc.updateInterest()
	default:
		pc.refused("sendmsg", errno, 1)
	}
	pc.flush()
	pc.outBytes.Store(int64(pc.out.bytes))
	pc.reportSendErrs()
	pc.allowDirect()
}

// updateRecv arms the socket's RECVMSG while it reads, and cancels it when
// it stops (paused or closing); a cancelled one is armed again, if need
// be, once its final completion came.
func (pc *Conn) updateRecv() {
	r, ok := pc.io.(ringIO)
	if !ok || r.rx == nil {
		return
	}
	reading := pc.st == packetOpen && !pc.paused
	switch {
	case reading && !pc.recvArmed:
		pc.recvArmed, pc.recvCtrl = true, pc.cfg.wantCtrl()
		r.rx.RecvMsg(pc.fd, pc.tag(driver.OpRecv), pc.recvCtrl)
	case pc.recvArmed && !pc.recvCancelling && (!reading || pc.recvCtrl != pc.cfg.wantCtrl()):
		// Stopped reading, or armed without room for the control
		// messages now asked for: its final completion arms another.
		pc.recvCancelling = true
		pc.drv.Cancel(pc.fd, pc.tag(driver.OpRecv))
	}
}

// received handles the RECVMSG's completions: a datagram is delivered (one
// already received is, even while paused); the final one says why it
// ended, and the socket arms another unless it stops reading.
func (pc *Conn) received(c *driver.Completion) {
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
	defer pc.rearmed()
	if c.Res < 0 && c.Res != -int32(unix.ECANCELED) && pc.st == packetOpen {
		errno := unix.Errno(-c.Res)
		if !pc.recvFailed("recvmsg", errno) && pc.st == packetOpen {
			// Not an error ICMP left (those fail one receive): the ring
			// cannot receive for this socket; readiness and recvmmsg can.
			pc.io = ringIO{tx: pc.io.(ringIO).tx}
		}
	}
	pc.updateInterest()
}

// recvOne delivers one datagram of the ring: b is its payload as copied.
func (pc *Conn) recvOne(b []byte, m *driver.Msg) {
	defer pc.recoverCallback("OnPacket")
	name := (*unix.RawSockaddrAny)(unsafe.Pointer(&m.Name[0]))
	pc.deliverOne(b[:min(len(b), pc.cfg.maxSize)], m.Size, m.Flags, name, m.NameLen, m.Control)
	pc.flushIfFull()
}
