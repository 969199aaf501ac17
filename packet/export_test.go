package packet

import (
	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/internal/loopapi"
	"github.com/ringloop/ringloop/internal/uring"
)

// RingRecv (tests only) reports whether pc receives with the driver's
// RECVMSG (ringIO) rather than recvmmsg on readiness. On the loop.
func RingRecv(pc *Conn) bool { return pc.ringRecv() }

// SetRing (tests only) turns the ring receive of sockets opened from now
// on off or on, and returns a function that restores it.
func SetRing(on bool) (restore func()) {
	old := packetRing
	packetRing = on
	return func() { packetRing = old }
}

// URingStats (tests only) returns the io_uring driver's live ops and the
// receives it parked without a buffer; ok is false on another driver. On
// the loop.
func URingStats(l *engine.Loop) (live int, noBufs uint64, ok bool) {
	in, err := loopapi.Open(l)
	if err != nil {
		return 0, 0, false
	}
	d, ok := in.Driver().(*uring.Driver)
	if !ok {
		return 0, 0, false
	}
	return d.LiveOps(), d.Stats().NoBufs, true
}

// SetRingSend (tests only) makes the ring sockets opened from now on send
// by linked SENDMSG chains (on) or sendmmsg, and returns a function that
// restores the default.
func SetRingSend(on bool) (restore func()) {
	old := packetRingSend
	packetRingSend = on
	return func() { packetRingSend = old }
}

// RingSend (tests only) reports whether pc sends by SENDMSG chains. On the
// loop.
func RingSend(pc *Conn) bool { return pc.rs != nil }
