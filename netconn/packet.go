package netconn

import (
	"errors"
	"net"
	"net/netip"
	"os"
	"sync"
	"time"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/internal/loopctl"
	"github.com/ringloop/ringloop/packet"
)

// PacketConn is a net.PacketConn whose datagram socket (UDP or unixgram) a
// ringloop loop serves: the loop receives in batches into a bounded queue
// that ReadFrom drains, and sends what WriteTo hands it with the
// iteration's other datagrams. When the queue holds its read limit
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

// datagram is one received datagram in the queue, or a read error.
type datagram struct {
	off, n int
	from   netip.AddrPort
	addr   net.Addr // a unixgram sender
	err    error
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
	for {
		nc.mu.Lock()
		if nc.closed {
			nc.mu.Unlock()
			return 0, nil, nc.opError("read", nil, net.ErrClosed)
		}
		if nc.rdl.passed() {
			nc.mu.Unlock()
			return 0, nil, nc.opError("read", nil, os.ErrDeadlineExceeded)
		}
		if nc.head < len(nc.q) {
			d := nc.q[nc.head]
			nc.q[nc.head] = datagram{}
			nc.head++
			n := copy(p, nc.data[d.off:d.off+d.n])
			nc.queued -= d.n
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
			if d.err != nil {
				return 0, d.addr, d.err
			}
			addr := d.addr
			if addr == nil {
				addr = net.UDPAddrFromAddrPort(d.from)
			}
			return n, addr, nil
		}
		if nc.lost != nil {
			err := nc.lost
			nc.mu.Unlock()
			return 0, nil, nc.opError("read", nil, err)
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
// unixgram socket): it copies p for the loop, which sends it with the
// iteration's other datagrams. It waits while the socket holds its limit of
// datagrams unsent, until the write deadline (os.ErrDeadlineExceeded).
func (nc *PacketConn) WriteTo(p []byte, addr net.Addr) (int, error) {
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
		err := nc.pc.WriteToAddr(p, addr)
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
	if h.nc.unix {
		addr = pc.SourceAddr()
	}
	h.nc.push(pc, datagram{n: len(b), from: from, addr: addr}, b)
}

// OnPacketError queues what ReadFrom reports (a truncated datagram, an
// ICMP error of a connected socket); a refused send is dropped, WriteTo
// having returned.
func (h packetHandler) OnPacketError(pc *packet.Conn, err error) {
	var oe *net.OpError
	if errors.As(err, &oe) && oe.Op == "read" {
		h.nc.push(pc, datagram{err: err}, nil)
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

// push queues a datagram (on the loop); at the read limit the socket stops
// receiving.
func (nc *PacketConn) push(pc *packet.Conn, d datagram, b []byte) {
	nc.mu.Lock()
	if nc.closed {
		nc.mu.Unlock()
		return
	}
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
	nc.q = append(nc.q, d)
	nc.queued += len(b)
	if !nc.paused && nc.queued >= nc.cfg.readLimit {
		nc.paused = true
		pc.PauseRead()
	}
	nc.mu.Unlock()
	signal(nc.rready)
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
