package netconn

import (
	"errors"
	"net"
	"net/netip"
	"os"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/net/ipv4"
	"golang.org/x/sys/unix"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/internal/loopctl"
	"github.com/ringloop/ringloop/packet"
)

// PacketConn is a net.PacketConn whose datagram socket (UDP or unixgram) a
// ringloop loop serves: the loop receives in batches into a bounded queue
// that ReadFrom drains, and sends what WriteTo hands it with the
// iteration's other datagrams, unless nothing is queued: then WriteTo
// sends on the caller's goroutine. When the queue holds its read limit
// (Limits.Read) the loop stops receiving until ReadFrom has drained
// half of it, so datagrams wait in the kernel's buffer, which drops (and
// counts) what overflows it, as it does for a slow net.UDPConn. Deadlines
// behave as package net's (os.ErrDeadlineExceeded, also for calls already
// waiting), and every method is safe from any goroutine except the loop.
//
// As with net.UDPConn, ReadFrom cuts a datagram longer than its buffer to
// the buffer's length. A datagram over the loop socket's MaxSize
// (65535 unless set through WithPacketOptions) is not delivered:
// ReadFrom returns an error wrapping packet.ErrTruncated in its place, as
// it returns the ICMP errors of a connected socket. A datagram the kernel
// refuses after WriteTo returned is lost as if in flight.
//
// For quic-go it also offers what quic-go type-asserts on a net.PacketConn
// (OOBCapablePacketConn and ReadBatch): ReadBatch takes many queued
// datagrams per call, WriteMsgUDP passes control messages (a UDP_SEGMENT
// run, an ECN mark) to the kernel with the datagram, and SyscallConn's
// RawConn runs Control on the loop with the socket's fd but refuses Read
// and Write. ReadMsgUDP and ReadBatch return the control messages the
// socket asked the kernel for through Control (quic-go's IP_RECVTOS and
// IP_PKTINFO: the ECN mark and the local address), as net.UDPConn does.
type PacketConn struct {
	pc      *packet.Conn
	loop    *engine.Loop
	cfg     *config
	network string
	unix    bool

	mu       sync.Mutex
	q        []datagram // received, not yet read: q[head:]
	head     int
	data     []byte // their payloads, back to back
	queued   int    // payload bytes in q[head:]
	paused   bool   // the loop stopped receiving: the queue is full
	resuming bool   // a resume task is queued
	closed   bool   // Close was called
	lost     error  // the socket closed under us (its loop shut down)

	rready, wroom chan struct{} // the loop's signals to a waiting ReadFrom or WriteTo
	done          chan struct{} // closed by Close
	gone          chan struct{} // closed when the socket is closed
	deadlines

	resumeT, roomT packetTask
}

// datagram is one received datagram in the queue, or a read error: n
// payload bytes at off in data, then oob bytes of control messages.
type datagram struct {
	off, n, oob int
	from        netip.AddrPort
	addr        net.Addr // a unixgram sender
	err         error
}

// packetTask runs one of a PacketConn's steps on its loop; see connTask.
type packetTask struct {
	nc *PacketConn
	fn func(*PacketConn)
}

func (t *packetTask) Run() { t.fn(t.nc) }

// errConnOptions refuses WithConnOptions on ListenPacket, whose socket's
// options are packet.Options: ignoring them would lose what they ask.
var errConnOptions = errors.New("netconn: ListenPacket takes WithPacketOptions, not WithConnOptions")

// ListenPacket opens a datagram socket on loops.Next() ("udp", "udp4",
// "udp6" or "unixgram", as packet.Listen) and returns it as a
// net.PacketConn. WithPacketOptions passes the socket's packet.Options
// (socket buffers, MaxSize...; WithConnOptions is refused), WithLimits
// its read limit; WriteTo blocks (until its deadline) while the loop
// socket holds its async write limit of datagrams unsent.
func ListenPacket(loops engine.Loops, network, addr string, opts ...Option) (*PacketConn, error) {
	cfg, err := newConfig(opts)
	if err == nil && len(cfg.conn) > 0 {
		err = errConnOptions
	}
	if err != nil {
		return nil, &net.OpError{Op: "listen", Net: network, Err: err}
	}
	l := loops.Next()
	nc := &PacketConn{
		loop:      l,
		cfg:       cfg,
		network:   network,
		unix:      network == "unixgram",
		rready:    make(chan struct{}, 1),
		wroom:     make(chan struct{}, 1),
		done:      make(chan struct{}),
		gone:      make(chan struct{}),
		deadlines: newDeadlines(),
	}
	nc.resumeT = packetTask{nc, (*PacketConn).resume}
	nc.roomT = packetTask{nc, func(nc *PacketConn) { signal(nc.wroom) }}
	pc, err := packet.Listen(l, network, addr, packetHandler{nc}, cfg.packet)
	if err != nil {
		return nil, err
	}
	nc.mu.Lock()
	nc.pc = pc
	nc.mu.Unlock()
	return nc, nil
}

// ReadFrom reads one datagram into p, waiting for one unless the read
// deadline has passed (os.ErrDeadlineExceeded) or the socket is closed.
func (nc *PacketConn) ReadFrom(p []byte) (int, net.Addr, error) {
	var n int
	var addr net.Addr
	_, err := nc.read(1, func(_ int, d datagram, b, _ []byte) {
		n, addr = copy(p, b), d.addr
		if addr == nil && d.err == nil {
			addr = net.UDPAddrFromAddrPort(d.from)
		}
	})
	return n, addr, err
}

// ReadMsgUDP is ReadFrom for quic-go's OOBCapablePacketConn, with the
// datagram's control messages in oob: those that fit whole, flags holding
// MSG_CTRUNC when some did not (and MSG_TRUNC for a payload cut to b).
func (nc *PacketConn) ReadMsgUDP(b, oob []byte) (n, oobn, flags int, addr *net.UDPAddr, err error) {
	_, err = nc.read(1, func(_ int, d datagram, p, ctrl []byte) {
		n = copy(b, p)
		oobn, flags = copyOOB(oob, ctrl, n < len(p))
		if d.err == nil && d.addr == nil {
			addr = net.UDPAddrFromAddrPort(d.from)
		}
	})
	return n, oobn, flags, addr, err
}

// ReadBatch reads the datagrams queued, at least one and at most len(ms),
// into each message's first buffer and its control messages into OOB, as
// ReadMsgUDP: quic-go's batchConn (ipv4.Message), many datagrams per
// hand-off from the loop. flags is ignored.
func (nc *PacketConn) ReadBatch(ms []ipv4.Message, _ int) (int, error) {
	return nc.read(len(ms), func(i int, d datagram, p, ctrl []byte) {
		m := &ms[i]
		m.N = 0
		if len(m.Buffers) > 0 {
			m.N = copy(m.Buffers[0], p)
		}
		m.NN, m.Flags = copyOOB(m.OOB, ctrl, m.N < len(p))
		m.Addr = d.addr
		if m.Addr == nil {
			m.Addr = net.UDPAddrFromAddrPort(d.from)
		}
	})
}

// copyOOB copies the whole control messages of ctrl that fit into dst and
// returns their length and the recvmsg flags: MSG_CTRUNC when some did
// not fit, MSG_TRUNC when cut says the payload was.
func copyOOB(dst, ctrl []byte, cut bool) (n, flags int) {
	for len(ctrl) >= unix.SizeofCmsghdr {
		h := (*unix.Cmsghdr)(unsafe.Pointer(&ctrl[0]))
		next := min(unix.CmsgSpace(int(h.Len)-unix.CmsgLen(0)), len(ctrl))
		if n+next > len(dst) {
			flags |= unix.MSG_CTRUNC
			break
		}
		n += copy(dst[n:], ctrl[:next])
		ctrl = ctrl[next:]
	}
	if cut {
		flags |= unix.MSG_TRUNC
	}
	return n, flags
}

// read hands fill up to max queued datagrams, waiting for one unless the
// read deadline has passed or the socket is closed. A queued read error is
// returned alone (after fill saw it, for its address): a batch stops before
// it.
func (nc *PacketConn) read(max int, fill func(i int, d datagram, b, oob []byte)) (int, error) {
	for {
		nc.mu.Lock()
		if nc.closed {
			nc.mu.Unlock()
			return 0, nc.opError("read", nil, net.ErrClosed)
		}
		if nc.rdl.passed() {
			more := nc.head < len(nc.q)
			nc.mu.Unlock()
			if more {
				signal(nc.rready) // pass on a wake-up this reader may have taken
			}
			return 0, nc.opError("read", nil, os.ErrDeadlineExceeded)
		}
		if nc.head < len(nc.q) {
			n := 0
			var err error
			for n < max && nc.head < len(nc.q) {
				d := nc.q[nc.head]
				if d.err != nil && n > 0 {
					break
				}
				nc.q[nc.head] = datagram{}
				nc.head++
				end := d.off + d.n
				fill(n, d, nc.data[d.off:end], nc.data[end:end+d.oob])
				nc.queued -= d.n + d.oob
				if d.err != nil {
					err = d.err
					break
				}
				n++
			}
			more := nc.head < len(nc.q)
			if !more {
				nc.q, nc.head, nc.data = nc.q[:0], 0, nc.data[:0]
			}
			kick := nc.paused && !nc.resuming && nc.queued <= nc.cfg.readLimit/2
			nc.resuming = nc.resuming || kick
			nc.mu.Unlock()
			if kick {
				// Refused only once the loop has shut down, which closed
				// the socket; queued datagrams stay readable.
				_ = loopctl.Run(nc.loop, &nc.resumeT)
			}
			if more {
				signal(nc.rready) // another reader may wait
			}
			return n, err
		}
		if nc.lost != nil {
			err := nc.lost
			nc.mu.Unlock()
			return 0, nc.opError("read", nil, err)
		}
		nc.mu.Unlock()
		select {
		case <-nc.rready:
		case <-nc.rdl.done():
		case <-nc.done:
		case <-nc.gone:
		}
	}
}

// WriteTo sends p to addr (a *net.UDPAddr, or a *net.UnixAddr on a
// unixgram socket): when the socket holds nothing unsent it sends p at
// once on the caller's goroutine, as net.UDPConn does; otherwise it copies
// p for the loop, which sends it, in order, with the iteration's other
// datagrams. It waits while the socket holds its limit of
// datagrams unsent, until the write deadline (os.ErrDeadlineExceeded).
func (nc *PacketConn) WriteTo(p []byte, addr net.Addr) (int, error) {
	return nc.write(p, nil, addr)
}

// WriteMsgUDP is WriteTo with control messages, for quic-go's
// OOBCapablePacketConn: a UDP_SEGMENT message makes p a GSO run, which the
// kernel sends as separate datagrams; an IP_TOS/IPV6_TCLASS one marks ECN.
func (nc *PacketConn) WriteMsgUDP(p, oob []byte, addr *net.UDPAddr) (n, oobn int, err error) {
	var to net.Addr
	if addr != nil {
		to = addr
	}
	if n, err = nc.write(p, oob, to); err == nil {
		oobn = len(oob)
	}
	return n, oobn, err
}

// write is WriteTo with the control messages oob.
func (nc *PacketConn) write(p, oob []byte, addr net.Addr) (int, error) {
	for wait := time.Duration(0); ; {
		nc.mu.Lock()
		closed, lost := nc.closed, nc.lost
		nc.mu.Unlock()
		switch {
		case closed:
			return 0, nc.opError("write", addr, net.ErrClosed)
		case lost != nil:
			return 0, nc.opError("write", addr, lost)
		case nc.wdl.passed():
			return 0, nc.opError("write", addr, os.ErrDeadlineExceeded)
		}
		err := nc.pc.WriteMsg(p, oob, addr)
		if err == nil {
			return len(p), nil
		}
		if !errors.Is(err, engine.ErrWriteBufferFull) {
			return 0, err
		}
		// Full: wait for the loop to take the queue (a round trip on its
		// control ring, which drains the queue first), then, while the
		// kernel's send buffer holds it back, for growing spells.
		var timer *time.Timer
		var fired <-chan time.Time
		if wait == 0 {
			if loopctl.Run(nc.loop, &nc.roomT) != nil {
				continue // the loop shut down: the socket is closed
			}
			wait = 100 * time.Microsecond
		} else {
			timer = time.NewTimer(wait)
			fired, wait = timer.C, min(2*wait, 10*time.Millisecond)
		}
		select {
		case <-nc.wroom:
		case <-fired:
		case <-nc.wdl.done():
		case <-nc.done:
		case <-nc.gone:
		}
		if timer != nil {
			timer.Stop()
		}
	}
}

// Close closes the socket: waiting ReadFrom and WriteTo calls return at
// once, and the loop hands what WriteTo took to the kernel before it closes
// the socket.
func (nc *PacketConn) Close() error {
	nc.mu.Lock()
	if nc.closed {
		nc.mu.Unlock()
		return nc.opError("close", nil, net.ErrClosed)
	}
	nc.closed = true
	nc.q, nc.head, nc.data, nc.queued = nil, 0, nil, 0
	close(nc.done)
	nc.mu.Unlock()
	nc.deadlines.stop()
	_ = nc.pc.Close()
	return nil
}

// LocalAddr returns the address the socket is bound to.
func (nc *PacketConn) LocalAddr() net.Addr { return nc.pc.LocalAddr() }

// SetReadBuffer sets the socket's SO_RCVBUF, as net.UDPConn's; quic-go's
// OOBCapablePacketConn asks for it (packet.Options.RecvBuffer at open).
func (nc *PacketConn) SetReadBuffer(bytes int) error {
	var serr error
	rc, _ := nc.pc.SyscallConn()
	if err := rc.Control(func(fd uintptr) {
		serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_RCVBUF, bytes)
	}); err != nil {
		return nc.opError("set", nil, err)
	}
	if serr != nil {
		return nc.opError("set", nil, os.NewSyscallError("setsockopt", serr))
	}
	return nil
}

// SyscallConn gives quic-go (OOBCapablePacketConn) the socket's fd for
// getsockopt/setsockopt: packet.Conn.SyscallConn's, whose Control runs on
// the loop and whose Read and Write refuse.
func (nc *PacketConn) SyscallConn() (syscall.RawConn, error) { return nc.pc.SyscallConn() }

// Engine returns the loop's socket, for what net.PacketConn does not
// offer (multicast groups, packet.Info).
func (nc *PacketConn) Engine() *packet.Conn { return nc.pc }

func (nc *PacketConn) opError(op string, addr net.Addr, err error) error {
	return &net.OpError{Op: op, Net: nc.network, Source: nc.pc.LocalAddr(), Addr: addr, Err: err}
}

// The loop's side: the engine socket's handler, and the resume task.

type packetHandler struct{ nc *PacketConn }

func (h packetHandler) OnPacket(pc *packet.Conn, b []byte, from netip.AddrPort) {
	var addr net.Addr
	var oob []byte
	if h.nc.unix {
		addr = pc.SourceAddr()
	} else {
		oob = pc.Info().OOB
	}
	h.nc.push(pc, datagram{n: len(b), from: from, addr: addr}, b, oob)
}

// OnPacketError queues what ReadFrom reports (a truncated datagram, an
// ICMP error of a connected socket); a refused send is dropped, WriteTo
// having returned.
func (h packetHandler) OnPacketError(pc *packet.Conn, err error) {
	var oe *net.OpError
	if errors.As(err, &oe) && oe.Op == "read" {
		h.nc.push(pc, datagram{err: err}, nil, nil)
	}
}

func (h packetHandler) OnPacketClose(_ *packet.Conn, err error) {
	nc := h.nc
	nc.mu.Lock()
	if err == nil {
		err = net.ErrClosed
	}
	nc.lost = err
	nc.mu.Unlock()
	close(nc.gone)
}

// push queues a datagram and its control messages oob (on the loop),
// leaving out a coalesced run's UDP_GRO, which the socket has cut back into
// datagrams; at the read limit the socket stops receiving.
func (nc *PacketConn) push(pc *packet.Conn, d datagram, b, oob []byte) {
	nc.mu.Lock()
	if nc.closed {
		nc.mu.Unlock()
		return
	}
	// Readers wait only on an empty queue, and one that leaves datagrams
	// wakes the next: only the first datagram signals, sparing the rest a
	// channel operation and a reader a wake-up to an emptied queue.
	wake := nc.head == len(nc.q)
	if nc.head > 0 && nc.head*2 >= len(nc.q) {
		// Move what is unread to the front, so the queue's memory stays
		// within the limit however steadily datagrams come.
		base, old := nc.q[nc.head].off, len(nc.q)
		nc.data = nc.data[:copy(nc.data, nc.data[base:])]
		n := copy(nc.q, nc.q[nc.head:])
		clear(nc.q[n:old]) // drop the addresses and errors read
		nc.q, nc.head = nc.q[:n], 0
		for i := range nc.q {
			nc.q[i].off -= base
		}
	}
	d.off = len(nc.data)
	nc.data = append(nc.data, b...)
	for len(oob) >= unix.SizeofCmsghdr {
		h := (*unix.Cmsghdr)(unsafe.Pointer(&oob[0]))
		if int(h.Len) < unix.SizeofCmsghdr || int(h.Len) > len(oob) {
			break
		}
		next := min(unix.CmsgSpace(int(h.Len)-unix.CmsgLen(0)), len(oob))
		if h.Level != unix.SOL_UDP {
			nc.data = append(nc.data, oob[:next]...)
		}
		oob = oob[next:]
	}
	d.oob = len(nc.data) - d.off - d.n
	nc.q = append(nc.q, d)
	nc.queued += d.n + d.oob
	if !nc.paused && nc.queued >= nc.cfg.readLimit {
		nc.paused = true
		pc.PauseRead()
	}
	nc.mu.Unlock()
	if wake {
		signal(nc.rready)
	}
}

// resume receives again once ReadFrom has drained the queue to half its
// limit.
func (nc *PacketConn) resume() {
	nc.mu.Lock()
	nc.resuming = false
	again := nc.paused && nc.queued <= nc.cfg.readLimit/2
	nc.paused = nc.paused && !again
	pc := nc.pc
	nc.mu.Unlock()
	if again {
		pc.ResumeRead()
	}
}
