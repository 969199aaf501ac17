package packet

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// Direct sends: a datagram written off the loop to a socket with nothing
// waiting to be sent (its async queue and the loop's send queue empty, no
// wait for room) leaves on the writer's goroutine, one non-blocking
// sendmsg of the caller's bytes, as net.UDPConn's WriteMsgUDP does: no
// copy, no wake-up of the loop, no loop pass per batch. quic-go writes a
// batch (a GSO run) at a time from its own goroutine, and each such
// batch through the async queue cost a hand-off.
//
// Direct sends are allowed once the socket has been written from off the
// loop (Conn.offLoop; that first write is queued): a loop that alone
// writes its socket would otherwise take the mutex twice a pass, to stop
// and allow them around its own sends.
//
// The async queue's mutex orders them: a direct send runs under it, and
// pc.direct, which allows it, is cleared under it by whatever queues a
// datagram (a writer that queues, the loop's own WriteTo) and set under it
// by the loop only once it has sent all it held with the async queue
// empty (an atomic, so that the loop reads it without the mutex). So a
// direct send never overtakes a queued datagram, the loop never sends
// while one is under way, and the close, which marks the async queue
// closed under the mutex before the fd is closed, never races one.
//
// A direct send the kernel does not take (EAGAIN, ENOBUFS, or an error
// such as ECONNREFUSED left by ICMP, EMSGSIZE, a refused UDP_SEGMENT) is
// queued instead, in order, and the loop's sendmmsg deals with it as with
// any queued datagram: it waits for room, sends again once after an ICMP
// error, or reports the refusal to OnPacketError and drops it. So writes
// return and report exactly as through the queue.

// sendDirect sends one datagram at once (under pc.async.Mu, pc.direct
// set) and reports whether the kernel took it.
func (pc *Conn) sendDirect(name, ctrl, b []byte) bool {
	// The header is the call's own: one in the socket would hold, and
	// move to the heap, the callers' sockaddr and control messages (Reply
	// builds them on its stack).
	h, iov := msgHeader(name, ctrl, b)
	h.Iov = &iov
	h.SetIovlen(1)
	errno := sendmsg(pc.fd, &h)
	for errno == unix.EINTR {
		errno = sendmsg(pc.fd, &h)
	}
	if directObserved != nil {
		directObserved(errno)
	}
	if errno != 0 {
		return false
	}
	pc.directOut.Add(1)
	return true
}

// directObserved, when tests set it, is told each direct send's result.
var directObserved func(unix.Errno)

func sendmsg(fd int, h *unix.Msghdr) unix.Errno {
	_, _, e := unix.RawSyscall(unix.SYS_SENDMSG, uintptr(fd), uintptr(unsafe.Pointer(h)), unix.MSG_DONTWAIT)
	return e
}

// allowDirect lets writes off the loop send directly again once the loop
// holds nothing to send (on the loop), on a socket written to off the loop.
func (pc *Conn) allowDirect() {
	if !pc.offLoop.Load() || pc.direct.Load() || pc.st != packetOpen || pc.blocked || !pc.out.empty() || (pc.rs != nil && pc.rs.inflight > 0) {
		return
	}
	a := &pc.async
	a.Mu.Lock()
	if a.Err == nil && len(a.Buf) == 0 {
		pc.direct.Store(true)
	}
	a.Mu.Unlock()
}

// stopDirect makes writes off the loop queue, behind what the loop holds
// (on the loop).
func (pc *Conn) stopDirect() {
	pc.async.Mu.Lock()
	pc.direct.Store(false)
	pc.async.Mu.Unlock()
}

// foldDirect adds the direct sends to the loop's count of datagrams sent
// (on the loop, whenever it serves the socket).
func (pc *Conn) foldDirect() {
	if pc.directOut.Load() != 0 {
		pc.counts.Out += pc.directOut.Swap(0)
	}
}
