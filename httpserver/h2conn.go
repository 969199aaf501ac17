package httpserver

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"net/http"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// An HTTP/2 connection (RFC 9113) on its loop: frames are read from the
// bytes OnData delivers and written into the connection's output with
// x/net's Framer, header blocks coded with its hpack; the connection's
// state machine, its streams, flow control and the bounds on what a
// client may make the server do are here (h2*.go). Everything runs on the
// connection's loop; an adapter handler's goroutine reaches its stream
// through the tasks HTTP/1.1 uses (chunk, bodyWake, deadlineTask).

const (
	// h2MaxFrame is the largest frame read and written: the protocol's
	// default SETTINGS_MAX_FRAME_SIZE, left as it is. An unfinished frame
	// is kept with engine.Conn.Keep, so it bounds what a connection keeps.
	h2MaxFrame = 16 << 10
	// h2ConnWindow is the connection's receive window: the most request
	// bodies a connection holds that no handler has read (net/http's).
	h2ConnWindow = 1 << 20
	// h2StreamWindow is a stream's receive window: half the connection's,
	// so one stream whose handler does not read leaves room for others,
	// and large enough that an upload is not held to a window a round trip.
	h2StreamWindow = 512 << 10
	// h2TableSize is the HPACK dynamic table size both ways: the
	// protocol's default, which bounds what a client's table costs.
	h2TableSize = 4096
	// h2DefaultStreams is Limits.Streams' default, net/http's.
	h2DefaultStreams = 250
	// h2MaxWindow is the largest flow-control window (RFC 9113 6.9.1).
	h2MaxWindow = 1<<31 - 1
)

// errStreamReset is what an adapter handler's context and writes report
// when the client reset its stream (RST_STREAM).
var errStreamReset = errors.New("httpserver: HTTP/2 stream reset by the client")

// h2Conn is an HTTP/2 connection's state; only its loop touches it.
type h2Conn struct {
	cs  *conn
	lp  *h2Loop
	dec *hpack.Decoder
	// enc is made at the first response and let go while the connection
	// rests (rest); encMax is the table size the client allows it, and
	// encUsed that a block went out, so a new encoder must first empty
	// the client's table.
	enc     *hpack.Encoder
	encMax  uint32
	encUsed bool

	streams    map[uint32]*h2Stream
	lastID     uint32 // the highest stream the client opened: one at or under it not in streams is closed
	open       int    // streams not closed, counted against maxStreams
	running    int    // handlers not finished, those of streams reset under them included
	maxStreams int

	sendWindow  int64       // the connection's send window
	peerInitial int64       // the client's SETTINGS_INITIAL_WINDOW_SIZE
	sendq       []*h2Stream // streams with data to send and room in their own window, served in turn

	recvWindow int64 // what the client may still send on the connection
	recvOwed   int64 // bytes released, to give back by WINDOW_UPDATE
	whole      int64 // bytes of request bodies held whole (fast API, inline adapter)

	blk    h2Block             // the header block being read
	fields []hpack.HeaderField // its regular fields

	settingsSeen bool // the client's first SETTINGS came
	goingAway    bool // GOAWAY sent: no stream opened since is served
	peerGone     bool // the client sent GOAWAY
	readEOF      bool // the client shut down its side
	dead         bool // the connection is closing: nothing more is read or written

	startAt int64 // unix ns: the connection turned to HTTP/2 (its SETTINGS are due within ReadHeader)
	idleAt  int64 // unix ns: when its last stream closed; 0 while one is open
	shutAt  int64 // unix ns: when maybeClose half-closed it after the client's GOAWAY
	flood   h2Flood
}

// h2Loop is what the HTTP/2 connections of a loop share, the loop serving
// one at a time: the Framer, whose read and write buffers grow to the
// largest frame and would stay that large in every connection that once
// carried one, the header block being encoded, and the Date header's
// value. An idle connection thus holds no buffer of its own.
type h2Loop struct {
	fr      *http2.Framer
	in      h2Input
	out     *conn        // the connection the Framer writes to (fr sets it)
	hbuf    bytes.Buffer // a header block being encoded
	date    string       // the Date header's value, for dateSec
	dateSec int64
	strs    map[string]string // header names and values of responses (intern)
}

// h2LoopOf returns ls's HTTP/2 state, made at its first HTTP/2 connection.
func h2LoopOf(ls *loopState) *h2Loop {
	if ls.h2 == nil {
		lp := &h2Loop{}
		lp.fr = http2.NewFramer((*h2Output)(lp), &lp.in)
		lp.fr.SetReuseFrames()
		lp.fr.SetMaxReadFrameSize(h2MaxFrame)
		// The Framer's check that a header block's frames come in one
		// run remembers the block across frames: shared, it would mix
		// connections. h2Conn.order makes it per connection.
		lp.fr.AllowIllegalReads = true
		ls.h2 = lp
	}
	return ls.h2
}

// fr returns the loop's Framer, writing to hc's connection.
func (hc *h2Conn) fr() *http2.Framer {
	hc.lp.out = hc.cs
	return hc.lp.fr
}

// h2Input is the reader the Framer reads one frame from: the frame's bytes
// in the current delivery.
type h2Input struct{ b []byte }

func (in *h2Input) Read(p []byte) (int, error) {
	if len(in.b) == 0 {
		return 0, errors.New("httpserver: HTTP/2 frame read past its end")
	}
	n := copy(p, in.b)
	in.b = in.b[n:]
	return n, nil
}

// h2Output is the writer the Framer writes frames to: the output of the
// connection it serves (h2Conn.fr), where each frame is copied.
type h2Output h2Loop

func (o *h2Output) Write(p []byte) (int, error) { return o.out.c.Write(p) }

// h2Error is a protocol error: a connection error when stream is 0 (the
// connection ends with GOAWAY), else a stream error (RST_STREAM).
type h2Error struct {
	code   http2.ErrCode
	stream uint32
	why    string
}

func (e *h2Error) Error() string { return "httpserver: HTTP/2 " + e.code.String() + ": " + e.why }

func connError(code http2.ErrCode, why string) error { return &h2Error{code: code, why: why} }

func streamError(id uint32, code http2.ErrCode, why string) error {
	return &h2Error{code: code, stream: id, why: why}
}

// startH2 turns cs to HTTP/2 once its client preface has come, rest being
// what followed it in the delivery: the server's SETTINGS and the
// connection window's growth go out, then the frames are read.
func startH2(cs *conn, rest []byte) {
	cfg := cs.s.cfg
	hc := &h2Conn{
		cs:          cs,
		lp:          h2LoopOf(cs.ls),
		encMax:      h2TableSize,
		maxStreams:  cfg.maxStreams,
		sendWindow:  65535,
		peerInitial: 65535,
		recvWindow:  h2ConnWindow,
		startAt:     time.Now().UnixNano(),
	}
	hc.idleAt = hc.startAt
	hc.dec = hpack.NewDecoder(h2TableSize, hc.emit)
	hc.dec.SetMaxStringLength(cfg.maxHeaderBytes)
	cs.h2 = hc
	cs.deadline = 0 // the HTTP/2 timeouts are the connection's own (tick)
	if cs.c.KeepLimit() < h2MaxFrame+9 {
		_ = cs.c.SetKeepLimit(h2MaxFrame + 9) // an unfinished frame is kept
	}
	_ = hc.fr().WriteSettings(
		http2.Setting{ID: http2.SettingMaxConcurrentStreams, Val: uint32(hc.maxStreams)},
		http2.Setting{ID: http2.SettingInitialWindowSize, Val: h2StreamWindow},
		http2.Setting{ID: http2.SettingMaxHeaderListSize, Val: uint32(cfg.maxHeaderBytes)},
	)
	_ = hc.fr().WriteWindowUpdate(0, h2ConnWindow-65535)
	if why := inadequateTLS(cs.c); why != "" {
		hc.fail(connError(http2.ErrCodeInadequateSecurity, why))
		return
	}
	hc.onData(rest)
}

// onData reads the whole frames in b and keeps an unfinished one for the
// next delivery.
func (hc *h2Conn) onData(b []byte) {
	for !hc.dead && len(b) >= 9 {
		n := int(b[0])<<16 | int(b[1])<<8 | int(b[2])
		if n > h2MaxFrame {
			hc.fail(connError(http2.ErrCodeFrameSize, "frame larger than SETTINGS_MAX_FRAME_SIZE"))
			return
		}
		if len(b) < 9+n {
			break
		}
		err := hc.order(http2.FrameType(b[3]), binary.BigEndian.Uint32(b[5:9])&(1<<31-1))
		if err != nil {
			hc.onError(err)
			return
		}
		hc.lp.in.b = b[:9+n]
		b = b[9+n:]
		f, err := hc.fr().ReadFrame()
		if err == nil {
			err = hc.frame(f)
		}
		if err != nil {
			hc.onError(err)
		}
	}
	if hc.dead || hc.cs.has(flagClosed) {
		return
	}
	if len(b) > 0 {
		_ = hc.cs.c.Keep(b) // over TLS too: the transport delivers plaintext
	}
}

// order is the Framer's check that a header block's frames come in one
// run, nothing between them (RFC 9113 section 6.10), for this
// connection: a connection error otherwise.
func (hc *h2Conn) order(t http2.FrameType, id uint32) error {
	switch {
	case hc.blk.active && t != http2.FrameContinuation:
		return connError(http2.ErrCodeProtocol, "a frame inside a header block")
	case hc.blk.active && id != hc.blk.id:
		return connError(http2.ErrCodeProtocol, "CONTINUATION for another stream")
	case !hc.blk.active && t == http2.FrameContinuation:
		return connError(http2.ErrCodeProtocol, "CONTINUATION outside a header block")
	}
	return nil
}

// onError acts on an error from reading or serving a frame.
func (hc *h2Conn) onError(err error) {
	var he *h2Error
	var se http2.StreamError
	var ce http2.ConnectionError
	switch {
	case errors.As(err, &he):
	case errors.As(err, &se):
		he = &h2Error{code: se.Code, stream: se.StreamID, why: "malformed frame"}
	case errors.As(err, &ce):
		why := "malformed frame"
		if d := hc.lp.fr.ErrorDetail(); d != nil {
			why = d.Error()
		}
		he = &h2Error{code: http2.ErrCode(ce), why: why}
	default:
		he = &h2Error{code: http2.ErrCodeProtocol, why: err.Error()}
	}
	if he.stream == 0 {
		hc.fail(he)
		return
	}
	if st := hc.streams[he.stream]; st != nil {
		st.reset(he.code, he)
		return
	}
	_ = hc.fr().WriteRSTStream(he.stream, he.code)
}

// frame serves one frame.
func (hc *h2Conn) frame(f http2.Frame) error {
	if !hc.settingsSeen {
		if sf, ok := f.(*http2.SettingsFrame); !ok || sf.IsAck() {
			return connError(http2.ErrCodeProtocol, "the client preface must end with SETTINGS")
		}
		hc.settingsSeen = true
	}
	switch f := f.(type) {
	case *http2.DataFrame:
		return hc.data(f)
	case *http2.HeadersFrame:
		return hc.headers(f)
	case *http2.ContinuationFrame:
		return hc.continuation(f)
	case *http2.SettingsFrame:
		return hc.settings(f)
	case *http2.PingFrame:
		if err := hc.flood.count(hc, h2Ping); err != nil || f.IsAck() {
			return err
		}
		return hc.fr().WritePing(true, f.Data)
	case *http2.WindowUpdateFrame:
		return hc.windowUpdate(f)
	case *http2.RSTStreamFrame:
		return hc.rstStream(f)
	case *http2.PriorityFrame:
		// Priorities are advice RFC 9113 deprecates: read and dropped.
		if f.StreamDep == f.StreamID {
			return streamError(f.StreamID, http2.ErrCodeProtocol, "stream depends on itself")
		}
		return hc.flood.count(hc, h2Cheap)
	case *http2.GoAwayFrame:
		hc.peerGone = true
		hc.maybeClose()
		return nil
	case *http2.PushPromiseFrame:
		return connError(http2.ErrCodeProtocol, "PUSH_PROMISE from a client")
	}
	// A frame of an unknown type is ignored (RFC 9113 section 4.1).
	return hc.flood.count(hc, h2Cheap)
}

// settings applies the client's settings and acknowledges them.
func (hc *h2Conn) settings(f *http2.SettingsFrame) error {
	if f.IsAck() {
		return hc.flood.count(hc, h2Cheap)
	}
	if err := hc.flood.count(hc, h2Settings); err != nil {
		return err
	}
	err := f.ForeachSetting(func(s http2.Setting) error {
		if err := s.Valid(); err != nil {
			return err
		}
		switch s.ID {
		case http2.SettingHeaderTableSize:
			// The encoder's table stays within its 4 KiB limit
			// whatever the client offers.
			hc.encMax = min(s.Val, h2TableSize)
			if hc.enc != nil {
				hc.enc.SetMaxDynamicTableSize(s.Val)
			}
		case http2.SettingInitialWindowSize:
			return hc.setPeerInitial(int64(s.Val))
		}
		return nil
	})
	if err != nil {
		return err
	}
	if err := hc.fr().WriteSettingsAck(); err != nil {
		return err
	}
	hc.pump()
	return nil
}

// setPeerInitial applies a new SETTINGS_INITIAL_WINDOW_SIZE: every stream's
// send window moves by the difference (RFC 9113 section 6.9.2).
func (hc *h2Conn) setPeerInitial(v int64) error {
	d := v - hc.peerInitial
	hc.peerInitial = v
	for _, st := range hc.streams {
		st.sendWindow += d
		if st.sendWindow > h2MaxWindow {
			return connError(http2.ErrCodeFlowControl, "SETTINGS_INITIAL_WINDOW_SIZE overflows a stream's window")
		}
		if d > 0 {
			hc.enqueue(st)
		}
	}
	return nil
}

// windowUpdate grows a send window.
func (hc *h2Conn) windowUpdate(f *http2.WindowUpdateFrame) error {
	if err := hc.flood.count(hc, h2Window); err != nil {
		return err
	}
	inc := int64(f.Increment)
	if f.StreamID == 0 {
		hc.sendWindow += inc
		if hc.sendWindow > h2MaxWindow {
			return connError(http2.ErrCodeFlowControl, "connection window over 2^31-1")
		}
		hc.pump()
		return nil
	}
	st := hc.streams[f.StreamID]
	if st == nil {
		if f.StreamID > hc.lastID {
			return connError(http2.ErrCodeProtocol, "WINDOW_UPDATE on an idle stream")
		}
		return nil // a closed stream's, in flight
	}
	st.sendWindow += inc
	if st.sendWindow > h2MaxWindow {
		return streamError(st.id, http2.ErrCodeFlowControl, "stream window over 2^31-1")
	}
	hc.enqueue(st)
	hc.pump()
	return nil
}

// rstStream ends a stream the client reset.
func (hc *h2Conn) rstStream(f *http2.RSTStreamFrame) error {
	st := hc.streams[f.StreamID]
	if st == nil {
		if f.StreamID > hc.lastID {
			return connError(http2.ErrCodeProtocol, "RST_STREAM on an idle stream")
		}
		return nil
	}
	if err := hc.flood.count(hc, h2Reset); err != nil {
		return err
	}
	st.abandon(errStreamReset)
	return nil
}

// fail ends the connection on a connection error: GOAWAY saying why, then
// the close (which sends what is buffered first).
func (hc *h2Conn) fail(e error) {
	if hc.dead {
		return
	}
	code, why := http2.ErrCodeInternal, e.Error()
	var he *h2Error
	if errors.As(e, &he) {
		code, why = he.code, he.why
	}
	hc.dead = true
	_ = hc.fr().WriteGoAway(hc.lastID, code, []byte(why))
	_ = hc.cs.c.Close()
}

// goAway begins a graceful close (Server.Shutdown): GOAWAY tells the
// client the last stream served; streams above it are not, streams up to
// it finish, and the connection closes once none is left.
func (hc *h2Conn) goAway() {
	if hc.dead || hc.goingAway {
		return
	}
	hc.goingAway = true
	_ = hc.fr().WriteGoAway(hc.lastID, http2.ErrCodeNo, nil)
	hc.maybeClose()
}

// h2ShutLinger bounds how long a connection half-closed after the client's
// GOAWAY waits for the client's end when the server has no idle timeout.
const h2ShutLinger = 5 * time.Second

// maybeClose closes a connection that is going away (GOAWAY sent or
// received, or the client's side shut) once no stream is left. A header
// block being read then cannot open one: it would be over GOAWAY's last
// stream, or never end.
//
// Closed by the client's GOAWAY alone, it half-closes instead: frames the
// client sent after its GOAWAY (a PING) may still be unread, and closing
// with unread bytes resets the connection, so the client would read a
// reset instead of the end. Reading goes on, dropping what comes, until
// the client closes its side (or the idle timeout ends the connection).
func (hc *h2Conn) maybeClose() {
	if !hc.dead && (hc.goingAway || hc.peerGone || hc.readEOF) && hc.open == 0 {
		hc.dead = true
		if hc.peerGone && !hc.goingAway && !hc.readEOF {
			hc.shutAt = time.Now().UnixNano()
			_ = hc.cs.c.CloseWrite()
			return
		}
		_ = hc.cs.c.Close()
	}
}

// onReadClosed: the client shut down its sending side. Streams still
// waiting for their request end, and so do those whose response waits for
// a window (no WINDOW_UPDATE can come); the others are answered, then the
// connection closes.
func (hc *h2Conn) onReadClosed() {
	hc.readEOF = true
	for _, st := range hc.streams {
		switch {
		case !st.recvDone && st.body != nil:
			// A streamed body's handler runs: it reads the end and answers.
			st.body.fail(io.ErrUnexpectedEOF)
			st.recvDone, st.discard, st.readAt = true, true, 0
		case !st.recvDone:
			st.abandon(errConnGone)
		case len(st.out) > 0 && (st.sendWindow <= 0 || hc.sendWindow <= 0):
			st.reset(http2.ErrCodeCancel, errConnGone)
		}
	}
	hc.maybeClose()
}

// onWritable follows the connection's output across its watermarks:
// over the high one the server stops sending DATA and reading frames (a
// client that does not read cannot make it buffer more, whatever it
// sends); under the low one both go on, and the handlers waiting for
// their data to leave are released.
func (hc *h2Conn) onWritable(w bool) {
	cs := hc.cs
	if hc.dead {
		return
	}
	cs.setPaused(!w)
	if !w {
		return
	}
	hc.pump()
	for _, st := range hc.streams {
		st.resume()
	}
}

// onClose ends every stream with the connection.
func (hc *h2Conn) onClose(cause error) {
	hc.dead = true
	for _, st := range hc.streams {
		st.abandon(cause)
	}
	hc.sendq = nil
}

// tick checks the connection's timeouts (on the loop's timer tick).
func (hc *h2Conn) tick(now int64) {
	if hc.dead {
		// Half-closed after the client's GOAWAY: a client that does not
		// close its side within the idle timeout (or h2ShutLinger) is cut.
		linger := hc.cs.s.cfg.idle
		if linger <= 0 {
			linger = h2ShutLinger
		}
		if hc.shutAt != 0 && hc.shutAt+int64(linger) <= now {
			hc.shutAt = 0
			_ = hc.cs.c.Close()
		}
		return
	}
	cs := hc.cs
	cfg := cs.s.cfg
	switch {
	case !hc.settingsSeen && cfg.readHeader > 0 && hc.startAt+int64(cfg.readHeader) <= now:
		hc.fail(connError(http2.ErrCodeSettingsTimeout, "no SETTINGS within the read-header timeout"))
		return
	case hc.blk.active && cfg.readHeader > 0 && hc.blk.start+int64(cfg.readHeader) <= now:
		hc.fail(connError(http2.ErrCodeEnhanceYourCalm, "header block not finished within the read-header timeout"))
		return
	case hc.open == 0 && hc.idleAt != 0 && cfg.idle > 0 && hc.idleAt+int64(cfg.idle) <= now:
		hc.goAway()
		return
	}
	if cs.stallAt != 0 && cs.stallAt <= now && !cs.c.Writable() {
		hc.stalled(errWriteStall, true)
		return
	}
	if hc.open == 0 && !hc.blk.active && hc.idleAt != 0 && now-hc.idleAt >= int64(cfg.tick()) {
		hc.rest()
		return
	}
	for _, st := range hc.streams {
		st.tick(now)
		if hc.dead {
			return
		}
	}
}

// rest lets go of what a connection idle for a tick does not need: its
// HPACK encoder (made again at its next response, encoder: the client's
// table, emptied then, costs the next responses their indexing), its
// stream map, send queue and field list (made again as used). A
// connection whose streams come and go keeps them while it is busy.
func (hc *h2Conn) rest() {
	hc.enc = nil
	hc.streams, hc.sendq, hc.fields = nil, nil, nil
}

// stalled ends a connection whose client stopped taking its output, by
// the window it gives (a zero window) or by not reading at all (abort:
// its output cannot leave, so GOAWAY could not either): every stream's
// handler learns cause.
func (hc *h2Conn) stalled(cause error, abort bool) {
	for _, st := range hc.streams {
		st.abandon(cause)
	}
	if abort {
		hc.dead = true
		_ = hc.cs.c.Abort()
		return
	}
	hc.fail(connError(http2.ErrCodeFlowControl, "the client took none of the response for Timeouts.WriteStall"))
}

// streamOpened and streamClosed follow the count of open streams: the
// connection is active while one is, idle (with its idle timeout) when
// none is.
func (hc *h2Conn) streamOpened() {
	hc.open++
	if hc.open == 1 {
		hc.idleAt = 0
		hc.cs.setState(http.StateActive)
	}
}

func (hc *h2Conn) streamClosed() {
	hc.open--
	if hc.open == 0 {
		hc.idleAt = time.Now().UnixNano()
		hc.cs.setState(http.StateIdle)
		hc.maybeClose()
	}
}
