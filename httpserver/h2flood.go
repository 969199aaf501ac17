package httpserver

import (
	"time"

	"golang.org/x/net/http2"
)

// The bounds on frames that make the server work without serving a
// request: each kind is counted per second of the loop's clock, and a
// client past a bound gets GOAWAY ENHANCE_YOUR_CALM and the close. The
// published attacks each meet one: the SETTINGS and PING floods (each
// owes an ACK), empty DATA and CONTINUATION frames (CVE-2019-9518, and
// the CONTINUATION floods of CVE-2024-27316), WINDOW_UPDATE and PRIORITY
// floods, and rapid reset (CVE-2023-44487: streams opened and reset at
// once, whose handlers a server starts and abandons). A client that does
// not read the ACKs it asks for is bounded apart: reading stops while the
// connection's output is over its high watermark (onWritable).
//
// The figures leave clients room: a SETTINGS frame is sent a few times a
// connection, PINGs for keepalive and bandwidth probes (gRPC's, at most
// one a round trip while data arrives), WINDOW_UPDATEs as a client reads
// (Go's sends two for every 4 KiB it reads; a client may send one for the
// stream and one for the connection after every DATA frame, as a gRPC
// stream of small messages makes grpc-go's nearly do); both of the latter
// grow with the data sent, one a KiB and two a DATA frame. The
// WINDOW_UPDATEs the data sent earns never expire: a slow client reads a
// window's worth of small frames long after they were sent (up to 8191
// frames of 8 bytes in a 64 KiB window) and answers them all at once. A
// client cancels streams it no longer needs, but hardly twice its
// concurrent streams a second.

type h2FloodKind uint8

const (
	h2Settings h2FloodKind = iota // SETTINGS (each owes an ACK)
	h2Ping                        // PING (each owes an ACK)
	h2Window                      // WINDOW_UPDATE
	h2Empty                       // DATA with neither data nor END_STREAM, CONTINUATION with neither fragment nor END_HEADERS
	h2Cheap                       // PRIORITY, unknown types, ACKs of the server's SETTINGS and PING
	h2Reset                       // RST_STREAM of an open stream, and streams refused for being over Limits.Streams
	h2Kinds
)

// h2FloodLimit is each kind's bound per second (h2Reset's is computed:
// twice Limits.Streams, at least 100).
var h2FloodLimit = [h2Kinds]int{h2Settings: 100, h2Ping: 1000, h2Window: 1000, h2Empty: 100, h2Cheap: 1000}

var h2FloodName = [h2Kinds]string{"SETTINGS", "PING", "WINDOW_UPDATE", "empty frames", "PRIORITY or unknown frames", "stream resets"}

// h2Flood counts a connection's frames of each kind in the current second.
type h2Flood struct {
	at   int64 // unix ns: the second's start, on the loop's clock
	n    [h2Kinds]int
	cur  int64 // DATA bytes sent this second
	prev int64 // and the second before
	// DATA frames sent this second and the one before
	curFrames, prevFrames int
	// owed is how many WINDOW_UPDATEs the DATA sent still earns (two a
	// frame, one a KiB), whenever they come; those past it count against
	// the second's bound.
	owed int64
}

// count counts a frame of kind k and returns a connection error once
// there are too many.
func (f *h2Flood) count(hc *h2Conn, k h2FloodKind) error {
	return f.add(hc.cs.ls.now, k, hc.maxStreams)
}

// add is count at now, for a connection of maxStreams concurrent streams.
func (f *h2Flood) add(now int64, k h2FloodKind, maxStreams int) error {
	f.roll(now)
	if k == h2Window && f.owed > 0 {
		f.owed--
		return nil
	}
	f.n[k]++
	limit := h2FloodLimit[k]
	switch k {
	case h2Ping:
		limit += int((f.cur+f.prev)>>10) + 2*(f.curFrames+f.prevFrames)
	case h2Reset:
		limit = max(100, 2*maxStreams)
	}
	if f.n[k] > limit {
		return connError(http2.ErrCodeEnhanceYourCalm, "too many "+h2FloodName[k])
	}
	return nil
}

// sent credits a DATA frame of n bytes sent.
func (f *h2Flood) sent(now int64, n int) {
	f.roll(now)
	f.cur += int64(n)
	f.curFrames++
	f.owed += 2 + int64(n>>10)
}

// roll starts a new second once the clock passed the current one.
func (f *h2Flood) roll(now int64) {
	if now-f.at < int64(time.Second) {
		return
	}
	f.at, f.n, f.prev, f.cur = now, [h2Kinds]int{}, f.cur, 0
	f.prevFrames, f.curFrames = f.curFrames, 0
}
