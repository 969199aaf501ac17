package engine

import "github.com/ringloop/ringloop/internal/uring"

// PacketRingRecv (tests only) reports whether pc receives with the
// driver's RECVMSG (ringIO) rather than recvmmsg on readiness, and sends
// with its SENDMSG. On the loop.
func PacketRingRecv(pc *PacketConn) bool { return pc.ringRecv() }

// SetPacketRing (tests only) turns the ring receive of sockets opened from
// now on off or on, and returns a function that restores it.
func SetPacketRing(on bool) (restore func()) {
	old := packetRing
	packetRing = on
	return func() { packetRing = old }
}

// URingStats (tests only) returns the io_uring driver's live ops and the
// receives it parked without a buffer; ok is false on another driver. On
// the loop.
func URingStats(l *Loop) (live int, noBufs uint64, ok bool) {
	d, ok := l.drv.(*uring.Driver)
	if !ok {
		return 0, 0, false
	}
	return d.LiveOps(), d.Stats().NoBufs, true
}

// SetPacketRingSend (tests only) makes the ring sockets opened from now on
// send by linked SENDMSG chains (on) or sendmmsg, and returns a function
// that restores the default.
func SetPacketRingSend(on bool) (restore func()) {
	old := packetRingSend
	packetRingSend = on
	return func() { packetRingSend = old }
}

// PacketRingSend (tests only) reports whether pc sends by SENDMSG chains.
// On the loop.
func PacketRingSend(pc *PacketConn) bool { return pc.rs != nil }
