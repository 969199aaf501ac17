package packet

import (
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// datagramIO is the seam between a datagram socket and the system calls
// that move its datagrams. The socket keeps what does not depend on them:
// readiness, delivery to the handler (deliverOne), the send queue (out),
// errors and the close; an implementation fills a receive batch and drains
// the queue. mmsgIO runs on the readiness every backend reports (the
// driver's Poll op) and moves batches with recvmmsg and sendmmsg; ringIO
// (ring.go), where the io_uring driver has multishot RECVMSG,
// receives by that op's completions instead (and sends as mmsgIO does, or
// by chains of linked SENDMSG ops: ring.go says why not by default).
type datagramIO interface {
	// receive reads what the socket has queued, a batch at a time, handing
	// the datagrams to the socket's deliver; it reports whether it stopped
	// on its budget with more perhaps queued, for the caller to go on next
	// iteration.
	receive(pc *Conn) (more bool)
	// send hands the queue's datagrams to the kernel, oldest first, and
	// removes those the kernel took or refused (each refusal recorded in
	// pc.sendErrs); it returns unix.EAGAIN when the kernel's send buffer is
	// full, the rest left queued.
	send(pc *Conn) error
}

// mmsgIO moves datagrams with recvmmsg and sendmmsg: one system call per
// batch each way.
type mmsgIO struct{}

// packetReadRounds bounds the recvmmsg calls one readiness report makes
// before the loop turns to its other work (Netty's maxMessagesPerRead, in
// batches); a socket that still had datagrams goes on next iteration.
const packetReadRounds = 4

// mmsghdr is struct mmsghdr: Go lays it out as C does (a msghdr, then the
// length the kernel writes), on 64- and 32-bit alike.
type mmsghdr struct {
	Hdr unix.Msghdr
	Len uint32
}

func (mmsgIO) receive(pc *Conn) bool {
	for range packetReadRounds {
		if pc.st != packetOpen || pc.paused {
			return false
		}
		ar := pc.pl.ar
		vlen := ar.prepare(pc.cfg)
		n, errno := recvmmsg(pc.fd, ar.hdrs[:vlen])
		switch errno {
		case 0:
		case unix.EAGAIN:
			return false
		case unix.EINTR:
			continue
		default:
			if !pc.recvFailed("recvmmsg", errno) {
				return false
			}
			continue
		}
		if n == 0 { // a socket shut down for reading
			return false
		}
		pc.deliver(ar, n)
		pc.flushIfFull()
		// A short batch drained the queue. On a connected socket it may
		// instead have stopped at an ICMP error, which the kernel keeps
		// for the next call and does not report as new readiness: ask.
		if n < vlen && !pc.connected {
			return false
		}
	}
	return true
}

func (mmsgIO) send(pc *Conn) error {
	q := &pc.out
	s := &pc.pl.scratch
	for !q.empty() {
		vlen := q.prepare(s, pc.cfg.batch, pc.gso)
		n, errno := sendmmsgCall(pc.fd, s.hdrs[:vlen])
		switch errno {
		case 0:
			k := s.datagrams(n)
			q.advance(k)
			pc.counts.Out += uint64(k)
			continue
		case unix.EAGAIN:
			return unix.EAGAIN
		case unix.EINTR:
			continue
		}
		if s.runs[0] > 1 && gsoRefused(errno) {
			pc.gso = false // and the run goes again, one by one
			continue
		}
		pc.refused("sendmmsg", errno, int(s.runs[0]))
	}
	return nil
}

// refused records that the kernel refused the oldest n queued datagrams
// (one send: a datagram, or a coalesced run) with errno. An ICMP error the
// kernel held for the socket (about an earlier datagram) fails the next
// send once: that one is sent again. Any other error drops them, each
// reported.
func (pc *Conn) refused(call string, errno unix.Errno, n int) {
	q := &pc.out
	m := &q.msgs[q.head]
	err := pc.packetError("write", q.dest(pc, m), os.NewSyscallError(call, errno))
	pc.sendErrs = append(pc.sendErrs, err)
	if m.tries == 0 && icmpErrno(errno) && pc.family != unix.AF_UNIX {
		m.tries++
		return
	}
	for range n - 1 {
		pc.sendErrs = append(pc.sendErrs, err)
	}
	q.advance(n)
	pc.counts.Dropped += uint64(n)
}

// icmpErrno reports the errors ICMP messages leave on a socket.
func icmpErrno(e unix.Errno) bool {
	switch e {
	case unix.ECONNREFUSED, unix.EHOSTUNREACH, unix.ENETUNREACH, unix.EHOSTDOWN, unix.EPROTO, unix.EMSGSIZE:
		return true
	}
	return false
}

func recvmmsg(fd int, hs []mmsghdr) (int, unix.Errno) {
	// MSG_TRUNC: each length is the datagram's, not what was copied, so a
	// truncated one is reported with its size.
	n, _, e := unix.RawSyscall6(unix.SYS_RECVMMSG, uintptr(fd), uintptr(unsafe.Pointer(&hs[0])), uintptr(len(hs)),
		unix.MSG_DONTWAIT|unix.MSG_TRUNC, 0, 0)
	return int(n), e
}

// sendmmsgCall is sendmmsg, for tests to refuse sends.
var sendmmsgCall = sendmmsg

func sendmmsg(fd int, hs []mmsghdr) (int, unix.Errno) {
	n, _, e := unix.RawSyscall6(unix.SYS_SENDMMSG, uintptr(fd), uintptr(unsafe.Pointer(&hs[0])), uintptr(len(hs)),
		unix.MSG_DONTWAIT, 0, 0)
	return int(n), e
}

// packetLoop is what a loop's datagram sockets share: the receive arena
// and the send headers. A loop runs one socket's batch at a time, and a
// handler never starts a receive (readiness and read continuations come
// from the loop), so one set serves them all; busy guards that rule.
type packetLoop struct {
	users   int
	ar      *packetArena
	scratch sendScratch
	busy    bool
}

// sendScratch is the headers of one sendmmsg call: per header, its run of
// datagrams (1, or a coalesced run: offload.go) and room for a
// UDP_SEGMENT control message; the iovecs of all the headers' payloads.
type sendScratch struct {
	hdrs []mmsghdr
	runs []int32
	ctrl []byte
	iovs []unix.Iovec
}

func newSendScratch(batch int) sendScratch {
	return sendScratch{hdrs: make([]mmsghdr, batch), runs: make([]int32, batch),
		ctrl: make([]byte, batch*gsoCtrlSize), iovs: make([]unix.Iovec, max(batch, gsoIovs))}
}

// datagrams is how many datagrams the first n headers carried.
func (s *sendScratch) datagrams(n int) int {
	k := 0
	for _, r := range s.runs[:n] {
		k += int(r)
	}
	return k
}

// acquirePacketLoop returns the shared datagram state a loop keeps in
// slot (loopapi.Internals.PacketShared), sized for c (on the loop). A
// larger size or batch replaces the arena; a receive running on the old
// one keeps it until it returns.
func acquirePacketLoop(slot *any, c packetConfig) *packetLoop {
	pl, _ := (*slot).(*packetLoop)
	if pl == nil {
		pl = &packetLoop{}
		*slot = pl
	}
	pl.users++
	if pl.ar == nil || pl.ar.batch < c.batch || pl.ar.size < c.maxSize {
		batch, size := c.batch, c.maxSize
		if pl.ar != nil {
			batch, size = max(batch, pl.ar.batch), max(size, pl.ar.size)
		}
		pl.ar = newPacketArena(batch, size)
	}
	if len(pl.scratch.hdrs) < c.batch {
		pl.scratch = newSendScratch(c.batch)
	}
	return pl
}

// releasePacketLoop drops the loop's shared state with its last socket.
func releasePacketLoop(slot *any, pl *packetLoop) {
	if pl.users--; pl.users == 0 && *slot == any(pl) {
		*slot = nil
	}
}

// packetArena is a receive batch: per datagram a payload slot, a source
// address and a control-message slot, and the headers pointing at them.
// Payload slots are as large as the largest MaxSize of the loop's sockets;
// the kernel writes only what arrives, so untouched pages cost no memory.
type packetArena struct {
	batch, size int
	bufs        []byte
	names       []unix.RawSockaddrAny
	ctrl        []byte
	hdrs        []mmsghdr
	iovs        []unix.Iovec
}

// packetCtrlSlot holds one datagram's control messages: a pktinfo and a
// TOS or traffic class, each padded (at most 40 + 24 bytes).
const packetCtrlSlot = 128

func newPacketArena(batch, size int) *packetArena {
	ar := &packetArena{
		batch: batch,
		size:  size,
		bufs:  make([]byte, batch*size),
		names: make([]unix.RawSockaddrAny, batch),
		ctrl:  make([]byte, batch*packetCtrlSlot),
		hdrs:  make([]mmsghdr, batch),
		iovs:  make([]unix.Iovec, batch),
	}
	for i := range ar.hdrs {
		h := &ar.hdrs[i].Hdr
		h.Name = (*byte)(unsafe.Pointer(&ar.names[i]))
		h.Iov = &ar.iovs[i]
		h.SetIovlen(1)
		h.Control = &ar.ctrl[i*packetCtrlSlot]
		ar.iovs[i].Base = &ar.bufs[i*size]
	}
	return ar
}

// prepare resets the headers the kernel writes back for a receive by a
// socket configured as c, and returns how many datagrams to ask for.
func (ar *packetArena) prepare(c packetConfig) int {
	vlen := min(c.batch, ar.batch)
	ctrl := 0
	if c.wantCtrl() {
		ctrl = packetCtrlSlot
	}
	for i := range vlen {
		h := &ar.hdrs[i]
		h.Hdr.Namelen = unix.SizeofSockaddrAny
		h.Hdr.SetControllen(ctrl)
		h.Hdr.Flags = 0
		h.Len = 0
		ar.iovs[i].SetLen(c.maxSize)
	}
	return vlen
}

// payload is datagram i's bytes (n of them, at most the slot).
func (ar *packetArena) payload(i, n int) []byte {
	return ar.bufs[i*ar.size : i*ar.size+n : i*ar.size+n]
}

// control is datagram i's control messages.
func (ar *packetArena) control(i int) []byte {
	n := min(int(ar.hdrs[i].Hdr.Controllen), packetCtrlSlot)
	return ar.ctrl[i*packetCtrlSlot : i*packetCtrlSlot+n]
}
