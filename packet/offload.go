package packet

import (
	"encoding/binary"
	"unsafe"

	"golang.org/x/sys/unix"
)

// UDP segmentation offloads: GSO on send (UDP_SEGMENT, Linux 4.18), GRO on
// receive (UDP_GRO, 5.0).
//
// Sending (GSO):
//
// A run of queued datagrams to one destination, all of one size but the
// last (which may be shorter), leaves in one sendmmsg header: its payloads
// as that header's iovecs and a UDP_SEGMENT control message giving the
// size. The kernel builds one large datagram and cuts it into the run's
// datagrams below the socket layer, so the run costs one trip through the
// UDP and IP stack instead of one per datagram; the peer receives the same
// datagrams as without it. Replies of an echo or a burst of QUIC packets to
// one peer are such runs.
//
// Only UDP sockets coalesce, and only datagrams without a control message
// of their own (WriteTo's, not Reply's with a source address). A kernel or
// route that refuses a coalesced send (EIO where the device cannot
// checksum, EINVAL where the size does not fit the path's MTU) turns GSO off
// for the socket and the run goes again datagram by datagram, so nothing is
// lost to it.
//
// Receiving (GRO): a UDP socket whose MaxSize holds any datagram (the
// default, 65535) asks the kernel to coalesce (UDP_GRO). A run of
// datagrams from one peer that arrives coalesced (a sender using GSO, or a
// device that aggregates) is read in one piece with a UDP_GRO control
// message giving the segment size, and the loop cuts it back into the
// datagrams the peer sent: OnPacket sees each, as without it. The run
// costs one trip up the stack and one slot of the receive batch.

const (
	// gsoMaxSegments is the most datagrams one coalesced send carries
	// (the kernel's UDP_MAX_SEGMENTS before 6.9).
	gsoMaxSegments = 64
	// gsoMaxBytes bounds a coalesced send's payload: one IPv4 datagram's
	// (65535 less the IP and UDP headers).
	gsoMaxBytes = 65507
	// gsoCtrlSize is the room of one UDP_SEGMENT control message.
	gsoCtrlSize = unix.SizeofCmsghdr + 8
	// gsoIovs is how many iovecs a sendmmsg call may point at in all.
	gsoIovs = 256
)

// packetGSO and packetGRO let tests and benchmarks turn coalescing off.
var packetGSO, packetGRO = true, true

// enableGRO asks the kernel to coalesce what pc receives, where every
// coalesced run fits a receive slot; a kernel without UDP_GRO leaves it off.
func (pc *Conn) enableGRO() {
	if !packetGRO || pc.family == unix.AF_UNIX || pc.cfg.maxSize < defaultPacketMaxSize {
		return
	}
	pc.cfg.gro = unix.SetsockoptInt(pc.fd, unix.SOL_UDP, unix.UDP_GRO, 1) == nil
}

// groSegment is the segment size a coalesced datagram's control messages
// give, 0 for a datagram received as sent.
func (pc *Conn) groSegment(ctrl []byte) int {
	if !pc.cfg.gro || len(ctrl) == 0 {
		return 0
	}
	seg := 0
	walkCmsgs(ctrl, func(level, typ int32, data []byte) {
		if level == unix.SOL_UDP && typ == unix.UDP_GRO {
			switch {
			case len(data) >= 4:
				seg = int(binary.NativeEndian.Uint32(data))
			case len(data) >= 2:
				seg = int(binary.NativeEndian.Uint16(data))
			}
		}
	})
	return seg
}

// segments returns how many queued datagrams from i, at most max, can
// leave as one coalesced send: 1 when i cannot lead a run.
func (q *packetQueue) segments(i, max int) int {
	first := &q.msgs[i]
	if first.ctrl != 0 || first.size == 0 {
		return 1
	}
	n, total := 1, first.size
	for j := i + 1; j < len(q.msgs) && n < min(max, gsoMaxSegments); j++ {
		m := &q.msgs[j]
		if m.ctrl != 0 || m.size == 0 || m.size > first.size || total+m.size > gsoMaxBytes || !q.sameName(first, m) {
			break
		}
		n++
		total += m.size
		if m.size < first.size { // a shorter one ends the run
			break
		}
	}
	return n
}

// sameName reports whether two queued datagrams go to one destination.
func (q *packetQueue) sameName(a, b *outMsg) bool {
	if a.name != b.name {
		return false
	}
	return string(q.buf[a.off:a.off+int(a.name)]) == string(q.buf[b.off:b.off+int(b.name)])
}

// coalesce makes header h, already pointing at datagram i, carry the run
// of n datagrams from i: their payloads as iovecs (iovs[0] is i's) and a
// UDP_SEGMENT control message in ctrl.
func (q *packetQueue) coalesce(i, n int, h *unix.Msghdr, iovs []unix.Iovec, ctrl []byte) {
	for k := 1; k < n; k++ {
		m := &q.msgs[i+k]
		p := m.off + int(m.name) + int(m.ctrl)
		iovs[k].Base = &q.buf[p]
		iovs[k].SetLen(m.size)
	}
	h.SetIovlen(n)
	cm := (*unix.Cmsghdr)(unsafe.Pointer(&ctrl[0]))
	cm.Level = unix.SOL_UDP
	cm.Type = unix.UDP_SEGMENT
	cm.SetLen(unix.CmsgLen(2))
	*(*uint16)(unsafe.Pointer(&ctrl[unix.CmsgLen(0)])) = uint16(q.msgs[i].size)
	h.Control = &ctrl[0]
	h.SetControllen(unix.CmsgSpace(2))
}

// gsoRefused reports whether errno, failing a coalesced send, says the
// socket or its route cannot coalesce (rather than refusing the datagrams).
func gsoRefused(errno unix.Errno) bool {
	switch errno {
	case unix.EIO, unix.EINVAL, unix.EOPNOTSUPP, unix.ENOPROTOOPT, unix.EMSGSIZE:
		return true
	}
	return false
}
