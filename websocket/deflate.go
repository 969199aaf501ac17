package websocket

import (
	"bytes"
	"compress/flate"
	"io"
	"slices"
	"strconv"
	"sync"
)

// permessage-deflate (RFC 7692), negotiated by the server when
// WithCompression is on. The package doc says why neither context is taken
// over: each message is a stream of its own, so the compressors and
// decompressors below are pooled, shared by every connection.

// extensionAnswer is the Sec-WebSocket-Extensions value of an accepted
// offer.
const extensionAnswer = "permessage-deflate; server_no_context_takeover; client_no_context_takeover"

// deflateOffer is Dial's Sec-WebSocket-Extensions with WithCompression:
// neither side keeps a context (each message inflates on its own, with
// pooled state), and the server's window is left to it (inflating takes
// any).
const deflateOffer = "permessage-deflate; server_no_context_takeover; client_no_context_takeover"

// deflateAnswerOK checks a server's answer to deflateOffer: it must keep
// server_no_context_takeover (RFC 7692 §7.1.1.1), may repeat
// client_no_context_takeover and name its window (server_max_window_bits),
// and may not limit the client's window, which was not offered.
func deflateAnswerOK(ans string) bool {
	seen, ok := deflateParams([]byte(ans), func(i int, val []byte, hasVal bool) bool {
		return i == 2 && hasVal && windowBits(val) != 0
	})
	return ok && seen[0]
}

// compressThreshold: smaller messages are sent uncompressed (a deflate
// block's overhead would outweigh what it saves); RSV1 is per message.
const compressThreshold = 64

// acceptDeflate reports whether one of the client's offers (the values of
// its Sec-WebSocket-Extensions headers) is a permessage-deflate offer the
// server can accept.
func acceptDeflate(r handshakeRequest) bool {
	return r.values("Sec-WebSocket-Extensions", func(v []byte) bool {
		for len(v) > 0 {
			var offer []byte
			offer, v, _ = bytes.Cut(v, []byte{','})
			if deflateOfferOK(offer) {
				return true
			}
		}
		return false
	})
}

// deflateOfferOK checks one offer: permessage-deflate with known
// parameters, each at most once, with valid values.
func deflateOfferOK(offer []byte) bool {
	_, ok := deflateParams(offer, func(i int, val []byte, hasVal bool) bool {
		if i == 2 {
			return hasVal && windowBits(val) == 15 // compress/flate cannot deflate with a smaller window
		}
		return !hasVal || windowBits(val) != 0
	})
	return ok
}

// deflateParams checks what an offer and an answer share: the extension is
// permessage-deflate, each parameter is known and named at most once, and
// only the window sizes carry a value; window (the side's rule) judges each
// window size, server_max_window_bits (2) or client_max_window_bits (3). It
// returns the parameters named, in that order, and whether all passed.
func deflateParams(ext []byte, window func(i int, val []byte, hasVal bool) bool) (seen [4]bool, ok bool) {
	name, params, _ := bytes.Cut(ext, []byte{';'})
	if !bytes.EqualFold(bytes.TrimSpace(name), []byte("permessage-deflate")) {
		return seen, false
	}
	for len(params) > 0 {
		var p []byte
		p, params, _ = bytes.Cut(params, []byte{';'})
		k, val, hasVal := bytes.Cut(bytes.TrimSpace(p), []byte{'='})
		k = bytes.TrimSpace(k)
		val = bytes.Trim(bytes.TrimSpace(val), `"`)
		i := -1
		switch string(bytes.ToLower(k)) {
		case "server_no_context_takeover":
			i = 0
		case "client_no_context_takeover":
			i = 1
		case "server_max_window_bits":
			i = 2
		case "client_max_window_bits":
			i = 3
		}
		if i < 0 || seen[i] || i < 2 && hasVal || i >= 2 && !window(i, val, hasVal) {
			return seen, false
		}
		seen[i] = true
	}
	return seen, true
}

// windowBits parses a window size parameter: 8 to 15, else 0.
func windowBits(v []byte) int {
	n, err := strconv.Atoi(string(v))
	if err != nil || n < 8 || n > 15 || len(v) > 2 || v[0] == '0' {
		return 0
	}
	return n
}

// deflateTail ends a message's deflate data for inflating: the 4 bytes the
// sender removed (§7.2.2), then an empty final stored block so that the
// decompressor reports io.EOF rather than running out of input.
var deflateTail = []byte{0x00, 0x00, 0xff, 0xff, 0x01, 0x00, 0x00, 0xff, 0xff}

// inflater is a pooled decompressor and its input: the message's payload,
// then deflateTail. The input is an io.ByteReader, so flate reads it
// without a bufio.Reader of its own.
type inflater struct {
	fr   io.ReadCloser
	p    []byte
	tail int
}

func (r *inflater) ReadByte() (byte, error) {
	if len(r.p) > 0 {
		b := r.p[0]
		r.p = r.p[1:]
		return b, nil
	}
	if r.tail < len(deflateTail) {
		r.tail++
		return deflateTail[r.tail-1], nil
	}
	return 0, io.EOF
}

func (r *inflater) Read(b []byte) (int, error) {
	if len(r.p) > 0 {
		n := copy(b, r.p)
		r.p = r.p[n:]
		return n, nil
	}
	if r.tail < len(deflateTail) {
		n := copy(b, deflateTail[r.tail:])
		r.tail += n
		return n, nil
	}
	return 0, io.EOF
}

var inflaters = sync.Pool{New: func() any { return new(inflater) }}

// inflatedPool holds the buffers messages are inflated into.
var inflatedPool = sync.Pool{New: func() any { return new([]byte) }}

// inflate decompresses a message's payload into a pooled buffer, at most
// limit bytes: past them it stops (a compression bomb costs limit bytes, not
// what it expands to) with 1009; data that is not deflate gives 1007.
// The caller gives the buffer back with releaseInflated.
func inflate(p []byte, limit int64) (*[]byte, error) {
	r := inflaters.Get().(*inflater)
	r.p, r.tail = p, 0
	if r.fr == nil {
		r.fr = flate.NewReader(r)
	} else {
		_ = r.fr.(flate.Resetter).Reset(r, nil)
	}
	bp := inflatedPool.Get().(*[]byte)
	out := (*bp)[:0]
	var err error
	for {
		if len(out) == cap(out) {
			out = slices.Grow(out, int(min(int64(max(4<<10, len(out))), limit+1-int64(len(out)))))
		}
		room := out[len(out):cap(out)]
		if left := limit + 1 - int64(len(out)); int64(len(room)) > left {
			room = room[:left]
		}
		var n int
		n, err = r.fr.Read(room)
		out = out[:len(out)+n]
		if int64(len(out)) > limit {
			err = protoErr(CloseTooBig, "message inflates to over %d bytes", limit)
			break
		}
		if err == io.EOF {
			err = nil
			break
		}
		if err != nil {
			err = protoErr(CloseInvalidPayload, "compressed message: %v", err)
			break
		}
	}
	r.p = nil
	inflaters.Put(r)
	*bp = out
	if err != nil {
		releaseInflated(bp)
		return nil, err
	}
	return bp, nil
}

func releaseInflated(bp *[]byte) {
	if cap(*bp) > maxIdleMessage {
		return
	}
	*bp = (*bp)[:0]
	inflatedPool.Put(bp)
}

// deflater is a pooled compressor writing into its own buffer.
type deflater struct {
	fw  *flate.Writer
	buf bytes.Buffer
}

var deflaters = sync.Pool{New: func() any {
	d := new(deflater)
	d.fw, _ = flate.NewWriter(&d.buf, flate.BestSpeed) // cannot fail for a valid level
	return d
}}

// appendDeflated appends p compressed as one message's payload (a fresh
// stream, sync-flushed, its 00 00 ff ff tail removed: §7.2.1).
func appendDeflated(dst, p []byte) []byte {
	d := deflaters.Get().(*deflater)
	d.buf.Reset()
	d.fw.Reset(&d.buf)
	_, _ = d.fw.Write(p) // a bytes.Buffer does not fail
	_ = d.fw.Flush()
	b := d.buf.Bytes()
	dst = append(dst, b[:len(b)-4]...)
	if d.buf.Cap() > maxPooledFrame {
		d.buf = bytes.Buffer{} // the writer is kept: it is the costly part
	}
	deflaters.Put(d)
	return dst
}
