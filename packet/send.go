package packet

import (
	"encoding/binary"
	"errors"
	"net"
	"net/netip"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/internal/asyncq"
)

// packetOverhead is what each datagram held unsent counts against the
// socket's limit besides its payload: its address and bookkeeping, so that
// empty datagrams are bounded too.
const packetOverhead = 64

var (
	errNoDatagram    = errors.New("packet: Reply outside OnPacket (or OnPacketError for a truncated datagram)")
	errUnboundSource = errors.New("packet: the datagram's sender is an unbound unixgram socket: it cannot be answered")
)

// WriteTo sends b to to; the zero AddrPort sends to a connected socket's
// peer (Dial). On the loop it queues a copy of b (b may be reused at
// once) and the loop sends the iteration's datagrams together, sendmmsg by
// sendmmsg, when the iteration ends; it allocates nothing. Off the loop it
// is the goroutine-safe form: when the socket holds nothing unsent it sends
// b at once on the caller's goroutine, one sendmsg with no copy (direct.go);
// otherwise, or when the kernel does not take it at once, it copies b into
// the socket's async queue, which the loop drains in order. Either way it returns
// engine.ErrWriteBufferFull, accepting nothing, when the datagrams the socket
// holds unsent (the kernel's send buffer being full, or the loop behind)
// would pass Options.AsyncWriteLimit (each counting its payload plus 64
// bytes), and an error wrapping net.ErrClosed once the socket is closing.
// A datagram the kernel refuses later is reported to OnPacketError.
func (pc *Conn) WriteTo(b []byte, to netip.AddrPort) error {
	if pc.loop.InEventLoop() {
		// A server answers the peer it just heard from, often several
		// times a batch: the last destination's sockaddr is kept, encoded.
		nc := &pc.lastName
		if !nc.ok || to != nc.to {
			n, err := pc.encodeAddrPort(&nc.name, to)
			if err != nil {
				nc.ok = false
				return pc.writeEncoded(nil, nil, b, err)
			}
			nc.to, nc.n, nc.ok = to, uint8(n), true
		}
		return pc.writeEncoded(nc.name[:nc.n], nil, b, nil)
	}
	var name rawName
	n, err := pc.encodeAddrPort(&name, to)
	return pc.writeEncoded(name[:n], nil, b, err)
}

// nameCache is the sockaddr of WriteTo's last destination on the loop.
type nameCache struct {
	to   netip.AddrPort
	name rawName
	n    uint8
	ok   bool
}

// WriteMsg is WriteTo for a net.Addr (a *net.UDPAddr, a *net.UnixAddr: a
// unixgram path or "@name", or nil for a connected socket's peer) with
// control messages oob, nil for none, which the kernel applies to the
// datagram as net.UDPConn's WriteMsgUDP does: a UDP_SEGMENT message sends
// b as a run of datagrams of that size (GSO), an IP_TOS one marks it (ECN).
// oob holds at most 255 bytes.
func (pc *Conn) WriteMsg(b, oob []byte, to net.Addr) error {
	var name rawName
	n, err := pc.encodeAddr(&name, to)
	if err == nil && len(oob) > 255 {
		err = errCtrlSize
	}
	return pc.writeEncoded(name[:n], oob, b, err)
}

// errCtrlSize refuses control messages longer than a queued datagram's
// record holds (255 bytes; a UDP_SEGMENT, an ECN and a pktinfo message take
// under 100).
var errCtrlSize = errors.New("packet: control messages over 255 bytes")

// writeEncoded is the common end of WriteTo and WriteMsg: b goes to the
// destination encoded in name with oob, unless the socket is closing or
// encoding failed (err, which names the destination).
func (pc *Conn) writeEncoded(name, oob, b []byte, err error) error {
	switch {
	case pc.closeCalled.Load():
		return errPacketClosed
	case err != nil:
		return pc.packetError("write", nil, err)
	}
	return pc.write(name, oob, b)
}

// Reply sends b to the source of the datagram being delivered (during
// OnPacket, or OnPacketError for a truncated one): a unixgram sender too,
// unless it is not bound. With Options.ReceiveInfo it answers from
// the address the datagram was sent to (not from a multicast group's).
// Otherwise as WriteTo on the loop.
func (pc *Conn) Reply(b []byte) error {
	if !pc.loop.InEventLoop() || !pc.delivering {
		return errNoDatagram
	}
	n := int(min(pc.curNameLen, unix.SizeofSockaddrAny))
	if pc.family == unix.AF_UNIX && n <= 2 {
		return errUnboundSource
	}
	var name rawName
	copy(name[:], unsafe.Slice((*byte)(unsafe.Pointer(pc.curName)), n))
	var ctrl [replyCtrlSize]byte
	c := replyControl(&ctrl, pc.curCtrl)
	return pc.write(name[:n], ctrl[:c], b)
}

// replyCtrlSize holds the one control message of a reply: an in6_pktinfo
// after its header (CmsgSpace(20): 40 bytes on 64-bit, 32 on 32-bit).
const replyCtrlSize = 40

// replyControl writes the control message that makes a reply leave from
// the address a datagram with control messages rcv was sent to, and
// returns its length (0: none).
func replyControl(dst *[replyCtrlSize]byte, rcv []byte) int {
	n := 0
	walkCmsgs(rcv, func(level, typ int32, data []byte) {
		h := (*unix.Cmsghdr)(unsafe.Pointer(&dst[0]))
		switch {
		case level == unix.IPPROTO_IP && typ == unix.IP_PKTINFO && len(data) >= unix.SizeofInet4Pktinfo:
			in := (*unix.Inet4Pktinfo)(unsafe.Pointer(&data[0]))
			// Spec_dst is the host's address the kernel would answer
			// from: the destination itself, or for a broadcast the
			// interface's address.
			h.Level, h.Type = unix.IPPROTO_IP, unix.IP_PKTINFO
			h.SetLen(unix.CmsgLen(unix.SizeofInet4Pktinfo))
			out := (*unix.Inet4Pktinfo)(unsafe.Pointer(&dst[unix.CmsgLen(0)]))
			*out = unix.Inet4Pktinfo{Spec_dst: in.Spec_dst}
			n = unix.CmsgSpace(unix.SizeofInet4Pktinfo)
		case level == unix.IPPROTO_IPV6 && typ == unix.IPV6_PKTINFO && len(data) >= unix.SizeofInet6Pktinfo:
			in := (*unix.Inet6Pktinfo)(unsafe.Pointer(&data[0]))
			a := netip.AddrFrom16(in.Addr)
			if a.IsMulticast() || a.Unmap().IsMulticast() {
				return
			}
			h.Level, h.Type = unix.IPPROTO_IPV6, unix.IPV6_PKTINFO
			h.SetLen(unix.CmsgLen(unix.SizeofInet6Pktinfo))
			out := (*unix.Inet6Pktinfo)(unsafe.Pointer(&dst[unix.CmsgLen(0)]))
			*out = unix.Inet6Pktinfo{Addr: in.Addr}
			if a.IsLinkLocalUnicast() {
				out.Ifindex = in.Ifindex // the address means nothing without it
			}
			n = unix.CmsgSpace(unix.SizeofInet6Pktinfo)
		}
	})
	return n
}

// write queues one datagram: on the loop into the send queue, elsewhere
// into the async queue.
func (pc *Conn) write(name, ctrl, b []byte) error {
	if !pc.loop.InEventLoop() {
		return pc.asyncWrite(name, ctrl, b)
	}
	if pc.st != packetOpen {
		return errPacketClosed
	}
	if pc.out.bytes+len(b)+packetOverhead > pc.limit {
		return engine.ErrWriteBufferFull
	}
	pc.out.add(name, ctrl, b)
	if pc.direct.Load() {
		pc.stopDirect()
	}
	if pc.blocked {
		pc.outBytes.Store(int64(pc.out.bytes))
		return nil
	}
	if !pc.flushQueued {
		pc.flushQueued = true
		if pc.in.Control(&pc.flushT) != nil { // the loop is terminating
			pc.flushQueued = false
			pc.flush()
		}
	}
	return nil
}

func (pc *Conn) flushTask() {
	pc.flushQueued = false
	pc.foldDirect()
	pc.flush()
}

// flush sends what is queued, unless the kernel's send buffer is full
// (POLLOUT or the timed retry goes on then).
func (pc *Conn) flush() {
	if pc.blocked || pc.out.empty() || pc.st != packetOpen {
		return
	}
	pc.sendNow()
}

// flushIfFull sends a batch's worth between the receive batches of one
// readiness, so an echo's queue stays one batch deep.
func (pc *Conn) flushIfFull() {
	if len(pc.out.msgs)-pc.out.head >= pc.cfg.batch {
		pc.flush()
	}
}

// sendNow hands the queue to the kernel and reports whether any datagram
// left it; then it reports the datagrams the kernel refused.
func (pc *Conn) sendNow() (progress bool) {
	before := pc.out.done
	if pc.io.send(pc) == unix.EAGAIN {
		pc.blocked = true
		pc.out.compact()
		pc.updateInterest()
	}
	pc.outBytes.Store(int64(pc.out.bytes))
	pc.reportSendErrs()
	pc.allowDirect()
	return pc.out.done != before
}

// reportSendErrs reports the datagrams the kernel refused.
func (pc *Conn) reportSendErrs() {
	if len(pc.sendErrs) > 0 {
		errs := pc.sendErrs
		pc.sendErrs = nil
		for _, err := range errs {
			if pc.st != packetOpen {
				break
			}
			pc.reportError(err)
		}
		if pc.sendErrs == nil {
			pc.sendErrs = errs[:0]
		}
	}
}

// writable goes on sending once the kernel reports room. A socket whose
// room reports send nothing twice in a row (a unixgram socket sending to a
// full receiver that it is not connected to: its own buffer has room, the
// receiver's queue does not) retries on a timer instead, backing off from
// 1 ms to 64 ms, rather than spin on readiness.
func (pc *Conn) writable() {
	pc.blocked = false
	switch {
	case pc.sendNow():
		pc.idleOut = 0
	case pc.blocked:
		pc.sentNothing()
	}
	pc.updateInterest()
}

// sentNothing counts a room report that sent nothing; from the second in a
// row the socket retries on a timer instead of waiting for the next.
func (pc *Conn) sentNothing() {
	if pc.idleOut++; pc.idleOut >= 2 {
		pc.retrying = true
		d := time.Millisecond << min(pc.idleOut-2, 6)
		if _, err := pc.loop.Schedule(&pc.retryT, d); err != nil {
			pc.retrying = false
		}
	}
}

func (pc *Conn) retryTask() {
	pc.retrying = false
	if pc.st == packetOpen && pc.blocked {
		pc.writable()
	}
}

// packetQueue is a socket's datagrams waiting for the kernel, oldest
// first: each one's sockaddr, control message and payload back to back in
// buf. Its buffers are kept between bursts (up to maxIdle), so
// steady traffic allocates nothing.
type packetQueue struct {
	buf   []byte
	msgs  []outMsg
	head  int    // the first unsent
	bytes int    // what the unsent ones count against the limit
	done  uint64 // datagrams taken or refused by the kernel, ever
	// maxIdle bounds buf kept between bursts: the socket's write limit, as
	// the async queue's spare. Datagram sockets are few (often one per
	// server) and dropping the buffers after each burst past 256 KiB cost
	// quic-go's 1 MiB HTTP/3 echoes half again their CPU (allocation,
	// clearing and collecting them per burst).
	maxIdle int
}

type outMsg struct {
	off        int   // in buf
	size       int   // payload bytes
	name, ctrl uint8 // sockaddr and control message bytes
	tries      uint8
}

func (q *packetQueue) empty() bool { return q.head == len(q.msgs) }

func (q *packetQueue) add(name, ctrl, b []byte) {
	q.msgs = append(q.msgs, outMsg{off: len(q.buf), size: len(b), name: uint8(len(name)), ctrl: uint8(len(ctrl))})
	q.buf = append(q.buf, name...)
	q.buf = append(q.buf, ctrl...)
	q.buf = append(q.buf, b...)
	q.bytes += len(b) + packetOverhead
}

// prepare points up to batch scratch headers at the unsent datagrams, one
// each, or with gso a coalesced run each where the datagrams allow
// (offload.go), and returns how many headers.
func (q *packetQueue) prepare(s *sendScratch, batch int, gso bool) int {
	vlen, i, iov := 0, q.head, 0
	for vlen < min(batch, len(s.hdrs)) && i < len(q.msgs) && iov < len(s.iovs) {
		h := &s.hdrs[vlen]
		h.Len = 0
		q.header(i, &h.Hdr, &s.iovs[iov])
		n := 1
		if gso {
			if n = q.segments(i, len(s.iovs)-iov); n > 1 {
				q.coalesce(i, n, &h.Hdr, s.iovs[iov:iov+n], s.ctrl[vlen*gsoCtrlSize:(vlen+1)*gsoCtrlSize])
			}
		}
		s.runs[vlen] = int32(n)
		vlen, i, iov = vlen+1, i+n, iov+n
	}
	return vlen
}

// header points h and iov at queued datagram i.
func (q *packetQueue) header(i int, h *unix.Msghdr, iov *unix.Iovec) {
	m := &q.msgs[i]
	c := m.off + int(m.name)
	p := c + int(m.ctrl)
	*h, *iov = msgHeader(q.buf[m.off:c], q.buf[c:p], q.buf[p:p+m.size])
	h.Iov = iov
	h.SetIovlen(1)
}

// msgHeader returns the header and iovec of one datagram: its encoded
// sockaddr name (empty for a connected socket's peer), control messages
// ctrl and payload b; the caller points the header at the iovec where it
// keeps them. Queued and direct sends (direct.go) both build theirs here.
// It returns values, not stores through pointers, so that a direct send's
// header on the writer's stack keeps the caller's bytes off the heap.
func msgHeader(name, ctrl, b []byte) (h unix.Msghdr, iov unix.Iovec) {
	if len(name) > 0 {
		h.Name = &name[0]
		h.Namelen = uint32(len(name))
	}
	if len(ctrl) > 0 {
		h.Control = &ctrl[0]
		h.SetControllen(len(ctrl))
	}
	if len(b) > 0 {
		iov.Base = &b[0]
	}
	iov.SetLen(len(b))
	return h, iov
}

// advance drops the n oldest datagrams, sent or refused.
func (q *packetQueue) advance(n int) {
	for _, m := range q.msgs[q.head : q.head+n] {
		q.bytes -= m.size + packetOverhead
	}
	q.head += n
	q.done += uint64(n)
	if q.empty() {
		q.reset()
	}
}

// reset empties the queue, keeping its buffers unless they grew large.
func (q *packetQueue) reset() {
	if cap(q.buf) > max(asyncq.MaxIdleBuffer, q.maxIdle) {
		q.buf = nil
	}
	if cap(q.msgs) > asyncq.MaxIdleBuffer/64 {
		q.msgs = nil
	}
	q.buf, q.msgs, q.head, q.bytes = q.buf[:0], q.msgs[:0], 0, 0
}

// compact moves the unsent datagrams to the front while the kernel holds
// them back, so the queue's memory stays within its bound.
func (q *packetQueue) compact() {
	if q.head == 0 {
		return
	}
	base := q.msgs[q.head].off
	q.buf = q.buf[:copy(q.buf, q.buf[base:])]
	q.msgs = q.msgs[:copy(q.msgs, q.msgs[q.head:])]
	for i := range q.msgs {
		q.msgs[i].off -= base
	}
	q.head = 0
}

// dest is a queued datagram's destination, for an error report.
func (q *packetQueue) dest(pc *Conn, m *outMsg) net.Addr {
	if m.name == 0 {
		return pc.raddr
	}
	var rsa unix.RawSockaddrAny
	b := unsafe.Slice((*byte)(unsafe.Pointer(&rsa)), unsafe.Sizeof(rsa))
	copy(b, q.buf[m.off:m.off+int(m.name)])
	if rsa.Addr.Family == unix.AF_UNIX {
		return &net.UnixAddr{Name: unixName(&rsa, uint32(m.name)), Net: "unixgram"}
	}
	return net.UDPAddrFromAddrPort(decodeSource(&rsa))
}

// packetAsync is the queue other goroutines write to: entries of an 8-byte
// header (sockaddr length, control length, payload length) and the three
// parts, which the loop moves into the send queue, one drain per batch on
// the control ring (unbounded, and holding at most one drain per socket).
type packetAsync struct {
	asyncq.Queue // Cost: each entry's payload plus packetOverhead
}

const asyncEntryHeader = 8

func (pc *Conn) asyncWrite(name, ctrl, b []byte) error {
	a := &pc.async
	cost := len(b) + packetOverhead
	a.Mu.Lock()
	if a.Err != nil {
		a.Mu.Unlock()
		return a.Err
	}
	if int64(a.Cost+cost)+pc.outBytes.Load() > int64(pc.limit) {
		a.Mu.Unlock()
		return engine.ErrWriteBufferFull
	}
	if !pc.offLoop.Load() {
		pc.offLoop.Store(true) // the loop allows direct sends once it has sent this
	}
	if pc.direct.Load() && len(a.Buf) == 0 && pc.sendDirect(name, ctrl, b) {
		a.Mu.Unlock()
		return nil
	}
	a.Buf = appendAsyncEntry(a.Buf, name, ctrl, b)
	a.Cost += cost
	pc.direct.Store(false) // until the loop has sent it
	if a.Queue.Queue(pc.loop, &pc.drainT) != nil {
		return errPacketClosed
	}
	return nil
}

// appendAsyncEntry appends one datagram's entry to an async queue's buf.
func appendAsyncEntry(buf, name, ctrl, b []byte) []byte {
	var h [asyncEntryHeader]byte
	h[0], h[1] = byte(len(name)), byte(len(ctrl))
	binary.LittleEndian.PutUint32(h[4:], uint32(len(b)))
	buf = append(buf, h[:]...)
	buf = append(buf, name...)
	buf = append(buf, ctrl...)
	return append(buf, b...)
}

func (pc *Conn) drainAsync() {
	pc.foldDirect()
	pc.drainAsyncWith(nil)
	pc.flush()
	pc.allowDirect()
}

// drainAsyncWith moves the async queue's datagrams into the send queue;
// with closeErr it also makes later writes fail with it. An empty send
// queue (the usual case: the loop sent the previous batch) takes the async
// buffer itself, its entries being laid out as the queue's (sockaddr,
// control, payload back to back, after an entry header the queue skips),
// and hands its own empty buffer back for the next batch: each byte
// written off the loop is copied once in user space, not twice.
func (pc *Conn) drainAsyncWith(closeErr error) {
	a := &pc.async
	b := a.Take(closeErr)
	if pc.out.empty() && len(b) > 0 {
		b = pc.out.adopt(b)
	} else {
		for p := b; len(p) >= asyncEntryHeader; {
			nl, cl, size := int(p[0]), int(p[1]), int(binary.LittleEndian.Uint32(p[4:]))
			p = p[asyncEntryHeader:]
			pc.out.add(p[:nl], p[nl:nl+cl], p[nl+cl:nl+cl+size])
			p = p[nl+cl+size:]
		}
	}
	pc.outBytes.Store(int64(pc.out.bytes))
	a.Recycle(b)
}

// adopt makes the empty queue's buffer b, a taken async queue's entries,
// and returns the queue's old buffer (emptied) for the async queue to
// reuse.
func (q *packetQueue) adopt(b []byte) []byte {
	old := q.buf[:0]
	q.reset()
	q.buf = b
	for off := 0; len(b)-off >= asyncEntryHeader; {
		nl, cl, size := int(b[off]), int(b[off+1]), int(binary.LittleEndian.Uint32(b[off+4:]))
		off += asyncEntryHeader
		q.msgs = append(q.msgs, outMsg{off: off, size: size, name: uint8(nl), ctrl: uint8(cl)})
		q.bytes += size + packetOverhead
		off += nl + cl + size
	}
	return old
}
