package packet

import (
	"encoding/binary"
	"fmt"
	"net"
	"net/netip"
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Info is what the kernel tells of the datagram being delivered,
// besides its payload and source, on a socket with
// Options.ReceiveInfo.
type Info struct {
	// Local is the address the datagram was sent to (one of the host's,
	// or a multicast group); an IPv4 one comes unmapped.
	Local netip.Addr
	// IfIndex is the interface it arrived on.
	IfIndex int
	// TOS is its IPv4 TOS or IPv6 traffic class byte: DSCP, and ECN in
	// the low two bits.
	TOS uint8
	// OOB is its control messages as the kernel wrote them (those above,
	// a coalesced run's UDP_GRO, and any asked for through SyscallConn),
	// for code that parses them itself, as quic-go does: valid during
	// OnPacket only.
	OOB []byte
}

// readable receives what the socket has queued (on readiness, or to go on
// after the read budget).
func (pc *Conn) readable() {
	pl := pc.pl
	if pl.busy { // never expected: a receive inside a receive
		pc.queueRead()
		return
	}
	pl.busy = true
	more := pc.io.receive(pc)
	pl.busy = false
	if more {
		pc.queueRead()
	}
}

// queueRead continues receiving next iteration: readiness is reported as an
// edge, so a socket left with datagrams after its budget would not be
// reported again.
func (pc *Conn) queueRead() {
	if pc.readQueued {
		return
	}
	pc.readQueued = true
	if pc.in.Control(&pc.readT) != nil {
		pc.readQueued = false // the loop is terminating: the socket is closing
	}
}

func (pc *Conn) readTask() {
	pc.readQueued = false
	if pc.st == packetOpen && !pc.paused {
		pc.readable()
	}
}

// deliver hands a receive batch's n datagrams to the handler.
func (pc *Conn) deliver(ar *packetArena, n int) {
	defer pc.recoverCallback("OnPacket")
	for i := 0; i < n && pc.st == packetOpen; i++ {
		h := &ar.hdrs[i]
		pc.deliverOne(ar.payload(i, min(int(h.Len), pc.cfg.maxSize)), int(h.Len), h.Hdr.Flags,
			&ar.names[i], h.Hdr.Namelen, ar.control(i))
	}
}

// deliverOne hands one datagram to the handler: b is what was copied, size
// the datagram's length; name and ctrl stay readable for SourceAddr, Info
// and Reply during the call. The caller recovers the handler's panic.
func (pc *Conn) deliverOne(b []byte, size int, flags int32, name *unix.RawSockaddrAny, nameLen uint32, ctrl []byte) {
	pc.delivering, pc.curName, pc.curNameLen, pc.curCtrl = true, name, nameLen, ctrl
	from := decodeSource(name)
	if flags&unix.MSG_TRUNC != 0 || size > len(b) {
		err := fmt.Errorf("%w: %d bytes, over MaxSize %d", ErrTruncated, size, pc.cfg.maxSize)
		pc.counts.Dropped++
		pc.h.OnPacketError(pc, pc.packetError("read", pc.sourceAddr(from), err))
	} else if seg := pc.groSegment(ctrl); seg > 0 && seg < len(b) {
		for len(b) > 0 && pc.st == packetOpen { // a coalesced run, cut back into its datagrams
			k := min(seg, len(b))
			pc.counts.In++
			pc.h.OnPacket(pc, b[:k:k], from)
			b = b[k:]
		}
	} else {
		pc.counts.In++
		pc.h.OnPacket(pc, b, from)
	}
	pc.delivering = false
}

// recvFailed reports a receive error of call; it says whether to read on: after an
// ICMP error the kernel held, yes; after a lack of memory or buffers, no
// (until the next readiness); an error that means the socket is broken
// closes it.
func (pc *Conn) recvFailed(call string, errno unix.Errno) bool {
	err := pc.packetError("read", pc.raddr, os.NewSyscallError(call, errno))
	switch errno {
	case unix.EBADF, unix.ENOTSOCK, unix.EFAULT, unix.EINVAL:
		pc.closeWith(err)
		return false
	}
	pc.reportError(err)
	return pc.st == packetOpen && icmpErrno(errno)
}

// SourceAddr returns the source of the datagram being delivered (during
// OnPacket, or OnPacketError for a truncated one) as a net.Addr: a
// *net.UDPAddr, or a *net.UnixAddr whose Name is the sender's path ("@name"
// when abstract, "" when it is not bound). Nil outside those calls. It
// allocates; OnPacket's from is the free form for UDP.
func (pc *Conn) SourceAddr() net.Addr {
	if !pc.loop.InEventLoop() || !pc.delivering {
		return nil
	}
	return pc.sourceAddr(decodeSource(pc.curName))
}

func (pc *Conn) sourceAddr(from netip.AddrPort) net.Addr {
	if pc.family == unix.AF_UNIX {
		return &net.UnixAddr{Name: unixName(pc.curName, pc.curNameLen), Net: "unixgram"}
	}
	return net.UDPAddrFromAddrPort(from)
}

// Info returns what the kernel told of the datagram being delivered (during
// OnPacket) on a socket with Options.ReceiveInfo, or whose options were set
// through SyscallConn; the zero Info otherwise.
func (pc *Conn) Info() Info {
	var pi Info
	if !pc.loop.InEventLoop() || !pc.delivering {
		return pi
	}
	if len(pc.curCtrl) > 0 {
		pi.OOB = pc.curCtrl
	}
	walkCmsgs(pc.curCtrl, func(level, typ int32, data []byte) {
		switch {
		case level == unix.IPPROTO_IP && typ == unix.IP_PKTINFO && len(data) >= unix.SizeofInet4Pktinfo:
			p := (*unix.Inet4Pktinfo)(unsafe.Pointer(&data[0]))
			pi.Local, pi.IfIndex = netip.AddrFrom4(p.Addr), int(p.Ifindex)
		case level == unix.IPPROTO_IPV6 && typ == unix.IPV6_PKTINFO && len(data) >= unix.SizeofInet6Pktinfo:
			p := (*unix.Inet6Pktinfo)(unsafe.Pointer(&data[0]))
			pi.Local, pi.IfIndex = netip.AddrFrom16(p.Addr).Unmap(), int(p.Ifindex)
		case level == unix.IPPROTO_IP && typ == unix.IP_TOS && len(data) >= 1:
			pi.TOS = data[0]
		case level == unix.IPPROTO_IPV6 && typ == unix.IPV6_TCLASS && len(data) >= 4:
			pi.TOS = uint8(binary.NativeEndian.Uint32(data))
		}
	})
	return pi
}

// walkCmsgs calls fn for each control message in b.
func walkCmsgs(b []byte, fn func(level, typ int32, data []byte)) {
	for len(b) >= unix.SizeofCmsghdr {
		h := (*unix.Cmsghdr)(unsafe.Pointer(&b[0]))
		n := int(h.Len)
		if n < unix.SizeofCmsghdr || n > len(b) {
			return
		}
		fn(h.Level, h.Type, b[unix.CmsgLen(0):n])
		next := unix.CmsgSpace(n - unix.CmsgLen(0))
		if next > len(b) {
			return
		}
		b = b[next:]
	}
}
